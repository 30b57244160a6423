//! Changing which PUs and NUMA nodes are allowed in a loaded topology, as
//! `hwloc_topology_allow` does with `HWLOC_ALLOW_FLAG_ALL` and
//! `HWLOC_ALLOW_FLAG_CUSTOM` (reading this process's own restrictions is
//! the host's business).

use super::Topology;
use crate::bitmap::{CpuSet, NodeSet};

/// Why a change of the allowed sets was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowError {
    /// The cpuset holds none of the topology's PUs.
    NoPu,
    /// The node set holds none of the topology's NUMA nodes.
    NoNumaNode,
}

impl core::fmt::Display for AllowError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            AllowError::NoPu => "the allowed cpuset contains none of the topology's PUs",
            AllowError::NoNumaNode => {
                "the allowed nodeset contains none of the topology's NUMA nodes"
            }
        })
    }
}

impl Topology {
    /// Allows every PU and NUMA node of the machine
    /// (`HWLOC_ALLOW_FLAG_ALL`).
    pub fn allow_all(&mut self) {
        self.allowed_cpuset = self.complete_cpuset().clone();
        self.allowed_nodeset = self.complete_nodeset().clone();
    }

    /// Allows the topology's PUs in `cpuset` and NUMA nodes in `nodeset`
    /// (`HWLOC_ALLOW_FLAG_CUSTOM`); a set not given leaves its allowed set
    /// as it is.  As hwloc, a set that names none of the topology's
    /// objects is refused, and the cpuset is changed before the nodeset is
    /// checked.
    #[doc(alias = "hwloc_topology_allow")]
    pub fn allow(
        &mut self,
        cpuset: Option<&CpuSet>,
        nodeset: Option<&NodeSet>,
    ) -> Result<(), AllowError> {
        if let Some(c) = cpuset {
            let c = c & self.cpuset();
            if c.is_empty() {
                return Err(AllowError::NoPu);
            }
            self.allowed_cpuset = c;
        }
        if let Some(n) = nodeset {
            let n = n & self.nodeset();
            if n.is_empty() {
                return Err(AllowError::NoNumaNode);
            }
            self.allowed_nodeset = n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_machines::{cs, small_machine};

    #[test]
    fn custom_sets_are_cut_to_the_machine_and_all_allows_everything() {
        let mut t = small_machine();
        t.allow(Some(&cs(4, 11)), None).unwrap();
        assert_eq!(t.allowed_cpuset, cs(4, 7));
        assert_eq!(t.allowed_nodeset, NodeSet::from_range(0, Some(1)));
        t.allow(None, Some(&NodeSet::from_index(1))).unwrap();
        assert_eq!(t.allowed_nodeset, NodeSet::from_index(1));
        assert_eq!(t.allow(Some(&cs(20, 21)), None), Err(AllowError::NoPu));
        assert_eq!(
            t.allow(None, Some(&NodeSet::from_index(5))),
            Err(AllowError::NoNumaNode)
        );
        assert_eq!(t.allowed_cpuset, cs(4, 7));
        t.allow_all();
        assert_eq!(t.allowed_cpuset, cs(0, 7));
        assert_eq!(t.allowed_nodeset, NodeSet::from_range(0, Some(1)));
    }
}
