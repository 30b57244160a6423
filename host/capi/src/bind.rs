//! Binding (`hwloc_set_cpubind` and friends), done natively.

use crate::topology::hwloc_topology;
use crate::types::{hwloc_topology_cpubind_support, hwloc_topology_membind_support};

/// Fills the binding support of a topology of this system.
pub(crate) fn fill_support(
    _cpu: &mut hwloc_topology_cpubind_support,
    _mem: &mut hwloc_topology_membind_support,
) {
}

/// `HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING` / `..._MEMBINDING`.
pub(crate) fn restrict_to_binding(_t: &mut hwloc_topology) {}
