//! Distance matrices between objects (latency, bandwidth, hops, ...).

use alloc::string::String;
use alloc::vec::Vec;

use crate::object::ObjId;

pub mod group;
pub mod transform;

pub use transform::TransformError;

/// Kind flags of a distance matrix (hwloc's `HWLOC_DISTANCES_KIND_*`).
pub mod kind {
    /// Values come from the operating system or firmware.
    pub const FROM_OS: u64 = 1 << 0;
    /// Values were given by the user.
    pub const FROM_USER: u64 = 1 << 1;
    /// Values are latencies: lower is better.
    pub const MEANS_LATENCY: u64 = 1 << 2;
    /// Values are bandwidths: higher is better.
    pub const MEANS_BANDWIDTH: u64 = 1 << 3;
    /// Objects are of different types.
    pub const HETEROGENEOUS_TYPES: u64 = 1 << 4;
}

/// A square matrix of values between objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distances {
    /// Name, such as `NUMALatency`; `None` for anonymous matrices.
    pub name: Option<String>,
    /// Kind flags (see [`kind`]).
    pub kind: u64,
    /// The objects, in matrix order.
    pub objs: Vec<ObjId>,
    /// Row-major values: `values[i * n + j]` is from `objs[i]` to `objs[j]`.
    pub values: Vec<u64>,
}

impl Distances {
    /// A matrix over `objs`; `values` must hold `objs.len()²` entries.
    pub fn new(
        name: Option<String>,
        kind: u64,
        objs: Vec<ObjId>,
        values: Vec<u64>,
    ) -> Option<Self> {
        let n = objs.len();
        if n.checked_mul(n)? != values.len() {
            return None;
        }
        Some(Distances {
            name,
            kind,
            objs,
            values,
        })
    }

    /// Number of objects.
    pub fn nbobjs(&self) -> usize {
        self.objs.len()
    }

    /// The value from object `i` to object `j` (matrix positions).
    pub fn value(&self, i: usize, j: usize) -> Option<u64> {
        let n = self.objs.len();
        if i < n && j < n {
            self.values.get(i * n + j).copied()
        } else {
            None
        }
    }

    /// Position of an object in the matrix (`hwloc_distances_obj_index`).
    #[doc(alias = "hwloc_distances_obj_index")]
    pub fn index_of(&self, id: ObjId) -> Option<usize> {
        self.objs.iter().position(|&o| o == id)
    }

    /// Removes the rows and columns of objects for which `alive` is false.
    pub fn retain_objects(&mut self, alive: impl Fn(ObjId) -> bool) {
        let n = self.objs.len();
        let keep: Vec<usize> = (0..n).filter(|&i| alive(self.objs[i])).collect();
        if keep.len() == n {
            return;
        }
        let mut values = Vec::with_capacity(keep.len() * keep.len());
        for &i in &keep {
            for &j in &keep {
                values.push(self.values[i * n + j]);
            }
        }
        self.objs = keep.iter().map(|&i| self.objs[i]).collect();
        self.values = values;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn rejects_wrong_sizes_and_drops_removed_objects() {
        assert!(Distances::new(None, 0, vec![1, 2], vec![1, 2, 3]).is_none());
        let mut d =
            Distances::new(None, kind::FROM_OS, vec![10, 11, 12], (0..9).collect()).unwrap();
        d.retain_objects(|id| id != 11);
        assert_eq!(d.objs, vec![10, 12]);
        assert_eq!(d.values, vec![0, 2, 6, 8]);
        assert_eq!(d.value(1, 0), Some(6));
        assert_eq!(d.value(2, 0), None);
    }
}
