//! Distance matrices (`--distances`, and verbose listings).

use std::fmt::Write as _;

use wloc_core::distances::{Distances, kind as dist_kind};
use wloc_core::object::ObjType;

use super::{IndexMode, Renderer, full_busid, signed_index};

impl Renderer<'_> {
    /// Every distance matrix.
    pub(super) fn distances(&mut self) {
        for d in &self.topo.distances {
            self.distance_matrix(d);
        }
    }

    fn distance_matrix(&mut self, d: &Distances) {
        let t = self.topo;
        let Some(&first) = d.objs.first() else {
            return;
        };
        // A matrix that still names removed objects cannot be shown.
        if d.objs.iter().any(|&id| t.get(id).is_none()) {
            return;
        }
        let means = if d.kind & dist_kind::MEANS_LATENCY != 0 {
            "latency"
        } else if d.kind & dist_kind::MEANS_BANDWIDTH != 0 {
            "bandwidth"
        } else {
            "distance"
        };
        let name = d.name.as_deref().unwrap_or("(null)");
        let logical = self.opts.index_mode != IndexMode::Physical;
        let which = if logical { "logical" } else { "physical" };
        let hetero = d.kind & dist_kind::HETEROGENEOUS_TYPES != 0;
        if hetero {
            let _ = writeln!(
                self.out,
                "Relative {means} matrix (name {name} kind {}) between {} heterogeneous objects by {which} indexes:",
                d.kind,
                d.nbobjs()
            );
        } else {
            let fo = t.obj(first);
            let _ = writeln!(
                self.out,
                "Relative {means} matrix (name {name} kind {}) between {} {}s (depth {}) by {which} indexes:",
                d.kind,
                d.nbobjs(),
                fo.obj_type.xml_name(),
                fo.depth().to_i32()
            );
        }
        // As lstopo 2.14: every cell is at most 23 characters wide; row
        // headers (and "index") are right-aligned to the widest header, other
        // cells to the widest cell, both at least 5 wide.
        let cell = |s: String| -> String { s.chars().take(23).collect() };
        let headers: Vec<String> = d
            .objs
            .iter()
            .map(|&id| {
                let o = t.obj(id);
                let idx = if logical {
                    o.logical_index()
                } else {
                    o.os_index.unwrap_or(u32::MAX)
                };
                cell(match o.obj_type {
                    ObjType::OSDevice => o.name.clone().unwrap_or_else(|| "(null)".into()),
                    ObjType::PCIDevice => o
                        .pci()
                        .map(|p| full_busid(p.domain, p.bus, p.dev, p.func))
                        .unwrap_or_default(),
                    ty if hetero => format!("{}:{}", ty.xml_name(), signed_index(idx)),
                    _ => signed_index(idx).to_string(),
                })
            })
            .collect();
        let values: Vec<String> = d.values.iter().map(|v| cell(v.to_string())).collect();
        let widest = |cells: &mut dyn Iterator<Item = &String>| {
            cells.map(|s| s.len()).max().unwrap_or(0).max(5)
        };
        let hw = widest(&mut headers.iter());
        let w = widest(&mut headers.iter().chain(&values));
        let _ = write!(self.out, " {:>hw$}", "index");
        for h in &headers {
            let _ = write!(self.out, " {h:>w$}");
        }
        self.out.push('\n');
        let n = d.nbobjs();
        for (i, h) in headers.iter().enumerate() {
            let _ = write!(self.out, " {h:>hw$}");
            for v in values.iter().skip(i * n).take(n) {
                let _ = write!(self.out, " {v:>w$}");
            }
            self.out.push('\n');
        }
    }
}
