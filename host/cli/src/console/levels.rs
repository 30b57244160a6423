//! The level summary (`depth N: ... objects`) and the closing notes of
//! verbose listings.

use std::fmt::Write as _;

use wloc_core::object::{Depth, ObjType};

use super::{Renderer, type_name, weight};

impl Renderer<'_> {
    /// The level summary (`depth N: ... objects`).
    pub(super) fn summary(&mut self) {
        let t = self.topo;
        let levels = t.normal_levels();
        let width = (levels.len().saturating_sub(1) + "depth xyz:  ".len())
            .max("Special depth -x:  ".len());
        let line = |out: &mut String, prefix: String, n: usize, name: String, ty: ObjType| {
            let pad = width.abs_diff(prefix.len());
            let _ = writeln!(out, "{prefix}{:pad$}{n} {name} (type #{})", "", ty.index());
        };
        for (d, level) in levels.iter().enumerate() {
            if let Some(&first) = level.first() {
                let o = t.obj(first);
                line(
                    &mut self.out,
                    format!("{:d$}depth {d}:", ""),
                    level.len(),
                    type_name(o, true),
                    o.obj_type,
                );
            }
        }
        for (depth, ty) in [
            (Depth::NumaNode, ObjType::NUMANode),
            (Depth::MemCache, ObjType::MemCache),
            (Depth::Bridge, ObjType::Bridge),
            (Depth::PciDevice, ObjType::PCIDevice),
            (Depth::OsDevice, ObjType::OSDevice),
            (Depth::Misc, ObjType::Misc),
        ] {
            let n = t.level(depth).len();
            if n > 0 {
                line(
                    &mut self.out,
                    format!("Special depth {}:", depth.to_i32()),
                    n,
                    ty.xml_name().into(),
                    ty,
                );
            }
        }
    }

    /// Closing notes of verbose listings: PUs missing from the tree or not
    /// allowed, and whether the topology describes this machine.
    pub(super) fn notes(&mut self) {
        let t = self.topo;
        let topo_set = t.cpuset();
        let unknown = t.complete_cpuset().and_not(topo_set);
        if !unknown.is_empty() {
            let _ = writeln!(
                self.out,
                "{} processors not represented in topology: {unknown}",
                weight(unknown.weight())
            );
        }
        // As lstopo: said whenever the sets differ, even when only PUs
        // outside the tree are allowed ("0 processors ...").
        if *topo_set != t.allowed_cpuset {
            let disallowed = topo_set.and_not(&t.allowed_cpuset);
            let _ = writeln!(
                self.out,
                "{} processors represented but not allowed: {disallowed}",
                weight(disallowed.weight())
            );
        }
        if !t.is_thissystem {
            self.out.push_str("Topology not from this system\n");
        }
    }
}
