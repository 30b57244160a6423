//! The object tree and the `--only` listing: one line per object.

use std::fmt::Write as _;

use wloc_core::object::{Depth, ObjId, ObjKind, ObjType};

use wloc_locality::CpusetFormat;

use super::{IndexMode, Renderer, memory_size, pci_class_string, type_name};

impl Renderer<'_> {
    /// lstopo's bus id of a PCI device, possibly a collapsed range.
    fn busid(&self, id: ObjId, collapse: i32) -> String {
        let t = self.topo;
        let Some(p) = t.obj(id).pci() else {
            return String::new();
        };
        let domain = if self.need_pci_domain {
            format!("{:04x}:", p.domain)
        } else {
            String::new()
        };
        let first = format!("{domain}{:02x}:{:02x}.{:01x}", p.bus, p.dev, p.func);
        if collapse <= 1 {
            return first;
        }
        let li = t.obj(id).logical_index() as usize + collapse as usize - 1;
        let last = t
            .level(Depth::PciDevice)
            .get(li)
            .and_then(|&l| t.obj(l).pci())
            .unwrap_or(p);
        if last.dev == p.dev {
            format!("{first}-{:01x}", last.func)
        } else {
            format!("{first}-{:02x}.{:01x}", last.dev, last.func)
        }
    }

    /// One object as lstopo prints it on a line (`output_console_obj`).
    fn obj_line(&mut self, id: ObjId, collapse: i32) {
        let t = self.topo;
        let o = t.obj(id);
        let v = self.verbosity;
        // hwloc passes `verbose_mode - 1` as a C truth value.
        let vflag = v != 1;
        let mode = self.opts.index_mode;
        let is_pci = o.obj_type == ObjType::PCIDevice;
        let os = o.os_index.unwrap_or(u32::MAX);
        let collapsed_pci = collapse > 1 && is_pci;
        let pidx = if collapsed_pci {
            "P#[collapsed]".to_string()
        } else {
            format!("P#{os}")
        };
        let lidx = if collapsed_pci {
            format!(
                "L#{}-{}",
                o.logical_index(),
                o.logical_index() as u64 + collapse as u64 - 1
            )
        } else {
            format!("L#{}", o.logical_index())
        };
        let busid = if is_pci {
            self.busid(id, collapse)
        } else {
            String::new()
        };
        let mut s = String::new();
        if self.cpuset_level < 2 {
            s.push_str(&type_name(o, vflag));
            if let Some(st) = &o.subtype {
                let _ = write!(s, "({st})");
            }
            let kind = o.kind();
            if o.depth() != Depth::Normal(0)
                && (v >= 2 || matches!(kind, ObjKind::Normal | ObjKind::Memory))
            {
                if mode != IndexMode::Physical {
                    let _ = write!(s, " {lidx}");
                } else if os != u32::MAX {
                    let _ = write!(s, " {pidx}");
                }
            }
            if let Some(name) = &o.name
                && matches!(o.obj_type, ObjType::Misc | ObjType::Group)
            {
                let _ = write!(s, " {name}");
            }
            let phys = if mode == IndexMode::Default
                && os != u32::MAX
                && (v >= 2 || matches!(o.obj_type, ObjType::PU | ObjType::NUMANode))
            {
                pidx.clone()
            } else {
                String::new()
            };
            if is_pci && v <= 1 {
                let class = o.pci().map(|p| p.class_id).unwrap_or(0);
                let _ = write!(s, " {busid} ({})", pci_class_string(class));
            }
            let attr = self.attrs(id, vflag);
            if !phys.is_empty() || !attr.is_empty() {
                s.push_str(" (");
                s.push_str(&phys);
                if !phys.is_empty() && !attr.is_empty() {
                    s.push(' ');
                }
                if collapsed_pci && !attr.is_empty() {
                    // The verbose attributes start with the single function's
                    // `busid=dddd:bb:dd.f` (18 bytes); show the range instead.
                    let _ = write!(s, "busid={busid}{}", attr.get(18..).unwrap_or(""));
                } else {
                    s.push_str(&attr);
                }
                s.push(')');
            }
            if v == 1 && id == t.root() && o.total_memory != 0 {
                let _ = write!(s, " ({} total)", memory_size(o.total_memory, false));
            }
            if let Some(name) = &o.name
                && (o.obj_type == ObjType::OSDevice || v >= 2)
                && !matches!(o.obj_type, ObjType::Misc | ObjType::Group)
            {
                let _ = write!(s, " \"{name}\"");
            }
        }
        if let Some(cs) = &o.cpuset {
            if self.cpuset_level == 1 {
                s.push_str(" cpuset=");
            }
            if self.cpuset_level > 0 {
                let form = self.opts.cpuset_format.unwrap_or(CpusetFormat::Hwloc);
                s.push_str(&form.show(cs.bitmap()));
            }
            if v >= 2 {
                let bind = self.opts.binding.as_ref();
                match o.obj_type {
                    ObjType::PU => {
                        if !t.allowed_cpuset.is_set(os) {
                            s.push_str(" (disallowed)");
                        } else if bind.is_some_and(|b| b.cpuset.is_set(os)) {
                            s.push_str(" (binding)");
                        }
                    }
                    ObjType::NUMANode => {
                        if !t.allowed_nodeset.is_set(os) {
                            s.push_str(" (disallowed)");
                        } else if bind.is_some_and(|b| b.nodeset.is_set(os)) {
                            s.push_str(" (binding)");
                        }
                    }
                    _ => {}
                }
            }
        }
        self.out.push_str(&s);
    }

    /// The tree, recursively (`output_topology`).
    pub(super) fn tree(&mut self, id: ObjId, parent: Option<ObjId>, mut indent: usize) {
        let t = self.topo;
        let o = t.obj(id);
        let collapse = self.collapsed.get(&id).copied().unwrap_or(0);
        if o.obj_type == ObjType::PCIDevice && collapse == -1 {
            return;
        }
        let merge_with_parent = self.verbosity <= 1
            && self.cpuset_level == 0
            && parent.is_some_and(|p| {
                let po = t.obj(p);
                po.arity() == 1
                    && po.memory_children().is_empty()
                    && po.io_children().is_empty()
                    && po.misc_children().is_empty()
                    && matches!((&o.cpuset, &po.cpuset), (Some(a), Some(b)) if a == b)
            });
        if merge_with_parent {
            self.out.push_str(" + ");
        } else {
            if parent.is_some() {
                self.out.push('\n');
            }
            self.out.extend(std::iter::repeat_n(' ', 2 * indent));
            indent += 1;
        }
        if collapse > 1 {
            let _ = write!(self.out, "{collapse} x {{ ");
        }
        self.obj_line(id, collapse);
        if collapse > 1 {
            self.out.push_str(" }");
        }
        for &c in o.memory_children() {
            self.tree(c, Some(id), indent);
        }
        for &c in o.children() {
            if !(self.opts.ignore_pus && t.obj(c).obj_type == ObjType::PU) {
                self.tree(c, Some(id), indent);
            }
        }
        for &c in o.io_children() {
            self.tree(c, Some(id), indent);
        }
        for &c in o.misc_children() {
            self.tree(c, Some(id), indent);
        }
    }

    /// `--only`: every object of a type, one per line (`output_only`).
    pub(super) fn only(&mut self, id: ObjId, ty: ObjType) {
        let t = self.topo;
        let o = t.obj(id);
        if o.obj_type == ty {
            self.obj_line(id, 0);
            self.out.push('\n');
        }
        for &c in o.children() {
            self.only(c, ty);
        }
        let kind = ty.kind();
        if kind == ObjKind::Memory || ty == ObjType::Misc {
            for &c in o.memory_children() {
                self.only(c, ty);
            }
        }
        if kind == ObjKind::Io || ty == ObjType::Misc {
            for &c in o.io_children() {
                self.only(c, ty);
            }
        }
        if ty == ObjType::Misc {
            for &c in o.misc_children() {
                self.only(c, ty);
            }
        }
    }
}
