//! An object's attribute list (sizes, cache and PCI attributes, infos),
//! short or verbose.

use std::fmt::Write as _;

use wloc_core::object::{BridgeUpstream, ObjId, ObjType};

use super::{Renderer, full_busid, memory_size, pci_class_string, quoted_info};

impl Renderer<'_> {
    /// The attribute list of an object (`hwloc_obj_attr_snprintf` with a
    /// space separator).
    pub(super) fn attrs(&self, id: ObjId, verbose: bool) -> String {
        let t = self.topo;
        let o = t.obj(id);
        let mut parts: Vec<String> = Vec::new();
        let local = o.numa().map(|n| n.local_memory).unwrap_or(0);
        if verbose {
            if o.obj_type == ObjType::NUMANode && local != 0 {
                parts.push(format!(
                    "local={} total={}",
                    memory_size(local, true),
                    memory_size(o.total_memory, true)
                ));
            } else if o.total_memory != 0 {
                parts.push(format!("total={}", memory_size(o.total_memory, true)));
            }
        } else if o.obj_type == ObjType::NUMANode && local != 0 {
            parts.push(memory_size(local, false));
        }
        match o.obj_type {
            ty if ty.is_cache() || ty == ObjType::MemCache => {
                let c = o.cache().cloned().unwrap_or_default();
                if verbose {
                    let assoc = match c.associativity {
                        -1 => " fully-associative".to_string(),
                        0 => String::new(),
                        w => format!(" ways={w}"),
                    };
                    parts.push(format!(
                        "size={} linesize={}{}",
                        memory_size(c.size, true),
                        c.linesize,
                        assoc
                    ));
                } else {
                    parts.push(memory_size(c.size, false));
                }
            }
            ObjType::Bridge if verbose => {
                if let Some(b) = o.bridge() {
                    let down = format!(
                        "buses={:04x}:[{:02x}-{:02x}]",
                        b.domain, b.secondary_bus, b.subordinate_bus
                    );
                    match &b.upstream {
                        BridgeUpstream::Pci(p) => {
                            parts.push(format!("{} {}", pci_identity(p), down));
                        }
                        BridgeUpstream::Host => parts.push(down),
                    }
                }
            }
            ObjType::PCIDevice if verbose => {
                if let Some(p) = o.pci() {
                    parts.push(pci_identity(p));
                }
            }
            _ => {}
        }
        if verbose {
            for i in &o.infos {
                parts.push(quoted_info(&i.name, &i.value));
            }
            if id == t.root() {
                for i in &t.infos {
                    if !o
                        .infos
                        .iter()
                        .any(|r| r.name == i.name && r.value == i.value)
                    {
                        parts.push(quoted_info(&i.name, &i.value));
                    }
                }
            }
        }
        parts.join(" ")
    }
}

/// `busid=dddd:bb:dd.f id=vvvv:dddd class=cccc(Name)[ link=X.XXGB/s]`.
fn pci_identity(p: &wloc_core::object::PciAttr) -> String {
    let mut s = format!(
        "busid={} id={:04x}:{:04x} class={:04x}({})",
        full_busid(p.domain, p.bus, p.dev, p.func),
        p.vendor_id,
        p.device_id,
        p.class_id,
        pci_class_string(p.class_id)
    );
    if p.linkspeed != 0.0 {
        let _ = write!(s, " link={:.2}GB/s", f64::from(p.linkspeed));
    }
    s
}
