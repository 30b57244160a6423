//! hwloc's transformations of a distance matrix
//! (`hwloc_distances_transform`), on row-major values so that the C
//! library's handed-out copies and the model's matrices share them.

use alloc::vec::Vec;

use super::{Distances, kind};
use crate::object::ObjId;

/// Why a matrix could not be transformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformError {
    /// Links are counted from bandwidths only.
    NotBandwidth,
    /// A value is not a multiple of the smallest one: no link count.
    NotMultiple,
    /// No object of the matrix is a switch (an `NVSwitch` OS device).
    NoSwitch,
    /// Fewer than two objects would remain.
    TooFewObjects,
}

impl core::fmt::Display for TransformError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            TransformError::NotBandwidth => "links are counted from bandwidths only",
            TransformError::NotMultiple => {
                "a value is not a multiple of the smallest one, links cannot be counted"
            }
            TransformError::NoSwitch => "the matrix has no switch (NVSwitch) object",
            TransformError::TooFewObjects => "fewer than two objects would remain",
        })
    }
}

/// `HWLOC_DISTANCES_TRANSFORM_LINKS` on `n`x`n` values: bandwidths
/// become numbers of links, dividing by the smallest positive value, the
/// diagonal zeroed.
pub fn links_values(values: &mut [u64], n: usize) -> Result<(), TransformError> {
    for i in 0..n {
        values[i * n + i] = 0;
    }
    let Some(divider) = values.iter().copied().filter(|&v| v > 0).min() else {
        return Ok(());
    };
    if values.iter().any(|v| v % divider != 0) {
        return Err(TransformError::NotMultiple);
    }
    for v in values.iter_mut() {
        *v /= divider;
    }
    Ok(())
}

/// `HWLOC_DISTANCES_TRANSFORM_MERGE_SWITCH_PORTS` on `n`x`n` values: the
/// switch ports (`switch[i]`) become the first one, their links added up.
/// Returns the positions of the other ports, whose rows and columns are
/// now zero and go.
pub fn merge_switch_ports_values(
    values: &mut [u64],
    n: usize,
    switch: &[bool],
) -> Result<Vec<usize>, TransformError> {
    let Some(first) = (0..n).find(|&i| switch[i]) else {
        return Err(TransformError::NoSwitch);
    };
    let mut merged = Vec::new();
    for j in (first + 1..n).filter(|&j| switch[j]) {
        for k in (0..n).filter(|&k| k != first && k != j) {
            values[k * n + first] += values[k * n + j];
            values[k * n + j] = 0;
            values[first * n + k] += values[j * n + k];
            values[j * n + k] = 0;
        }
        values[first * n + first] += values[j * n + j];
        values[j * n + j] = 0;
        merged.push(j);
    }
    Ok(merged)
}

/// `HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE` on `n`x`n` values: the
/// bandwidth between two objects through the switches (`switch[i]`) is
/// the smaller of what the first sends to and the second receives from
/// them.
pub fn transitive_closure_values(values: &mut [u64], n: usize, switch: &[bool]) {
    for i in (0..n).filter(|&i| !switch[i]) {
        let to_sw: u64 = (0..n)
            .filter(|&k| switch[k])
            .map(|k| values[i * n + k])
            .sum();
        for j in (0..n).filter(|&j| j != i && !switch[j]) {
            let from_sw: u64 = (0..n)
                .filter(|&k| switch[k])
                .map(|k| values[k * n + j])
                .sum();
            values[i * n + j] = to_sw.min(from_sw);
        }
    }
}

impl Distances {
    /// Counts links instead of bandwidths (see [`links_values`]).
    pub fn transform_links(&mut self) -> Result<(), TransformError> {
        if self.kind & kind::MEANS_BANDWIDTH == 0 {
            return Err(TransformError::NotBandwidth);
        }
        links_values(&mut self.values, self.objs.len())
    }

    /// Merges the ports of the switches `is_switch` tells (see
    /// [`merge_switch_ports_values`]).
    pub fn merge_switch_ports(
        &mut self,
        is_switch: impl Fn(ObjId) -> bool,
    ) -> Result<(), TransformError> {
        let n = self.objs.len();
        let switch: Vec<bool> = self.objs.iter().map(|&o| is_switch(o)).collect();
        let merged = merge_switch_ports_values(&mut self.values, n, &switch)?;
        if n - merged.len() < 2 {
            return Err(TransformError::TooFewObjects);
        }
        let keep: Vec<bool> = (0..n).map(|i| !merged.contains(&i)).collect();
        self.keep_positions(&keep);
        Ok(())
    }

    /// Bandwidths through the switches `is_switch` tells (see
    /// [`transitive_closure_values`]).
    pub fn transitive_closure(&mut self, is_switch: impl Fn(ObjId) -> bool) {
        let n = self.objs.len();
        let switch: Vec<bool> = self.objs.iter().map(|&o| is_switch(o)).collect();
        transitive_closure_values(&mut self.values, n, &switch);
    }

    /// Keeps the rows and columns at the positions `keep` marks, in order.
    pub fn keep_positions(&mut self, keep: &[bool]) {
        let n = self.objs.len();
        let pos: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
        let mut values = Vec::with_capacity(pos.len() * pos.len());
        for &i in &pos {
            for &j in &pos {
                values.push(self.values[i * n + j]);
            }
        }
        self.objs = pos.iter().map(|&i| self.objs[i]).collect();
        self.values = values;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn switch_ports_merge_and_close_as_hwloc() {
        // Objects 10 and 11 are GPUs, 20 and 21 two ports of one switch.
        let v = vec![
            0, 0, 2, 1, //
            0, 0, 1, 2, //
            2, 1, 0, 0, //
            1, 2, 0, 0,
        ];
        let d = Distances::new(None, kind::MEANS_BANDWIDTH, vec![10, 11, 20, 21], v).unwrap();
        let sw = |o: ObjId| o >= 20;
        let mut closed = d.clone();
        closed.transitive_closure(sw);
        assert_eq!(closed.value(0, 1), Some(3));
        assert_eq!(closed.value(1, 0), Some(3));
        let mut merged = d.clone();
        merged.merge_switch_ports(sw).unwrap();
        assert_eq!(merged.objs, vec![10, 11, 20]);
        assert_eq!(merged.values, vec![0, 0, 3, 0, 0, 3, 3, 3, 0]);
        let mut none = d.clone();
        assert_eq!(
            none.merge_switch_ports(|_| false),
            Err(TransformError::NoSwitch)
        );
        let mut links = d.clone();
        links.transform_links().unwrap();
        assert_eq!(links.values, d.values);
        let mut latency =
            Distances::new(None, kind::MEANS_LATENCY, vec![1, 2], vec![1, 2, 3, 4]).unwrap();
        assert_eq!(latency.transform_links(), Err(TransformError::NotBandwidth));
        let mut odd =
            Distances::new(None, kind::MEANS_BANDWIDTH, vec![1, 2], vec![0, 2, 3, 0]).unwrap();
        assert_eq!(odd.transform_links(), Err(TransformError::NotMultiple));
    }
}
