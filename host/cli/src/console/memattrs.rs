//! Memory attributes (`--memattrs`, and verbose listings).

use std::fmt::Write as _;

use wloc_core::bitmap::CpuSet;
use wloc_core::memattrs::{self, Initiator, MemAttr};
use wloc_core::object::{Depth, ObjId};

use super::{IndexMode, Renderer, signed_index, type_name, weight};

/// One value of a memory attribute for a target, with its initiator.
type InitiatorValue<'m> = (Option<&'m Initiator>, u64);

impl Renderer<'_> {
    /// An object as memory-attribute listings name it: `NUMANode L#0`,
    /// `Group0 P#1 "name"`.
    fn memattr_obj(&self, id: ObjId) -> String {
        let o = self.topo.obj(id);
        let physical = self.opts.index_mode == IndexMode::Physical;
        let idx = if physical {
            o.os_index.unwrap_or(u32::MAX)
        } else {
            o.logical_index()
        };
        let c = if physical { 'P' } else { 'L' };
        let mut s = format!("{} {c}#{}", type_name(o, false), signed_index(idx));
        if let Some(name) = &o.name {
            let _ = write!(s, " \"{name}\"");
        }
        s
    }

    /// The highest normal object whose cpuset is exactly `set`.
    fn obj_with_cpuset(&self, set: &CpuSet) -> Option<ObjId> {
        let t = self.topo;
        let mut cur = t.root();
        loop {
            let o = t.obj(cur);
            let cs = o.cpuset.as_ref()?;
            if cs == set {
                return Some(cur);
            }
            if !cs.includes(set) {
                return None;
            }
            cur = *o.children().iter().find(|&&c| {
                t.obj(c)
                    .cpuset
                    .as_ref()
                    .is_some_and(|ccs| ccs.includes(set))
            })?;
        }
    }

    fn memattr_initiator(&self, init: &Initiator) -> String {
        match init {
            Initiator::CpuSet(cs) => {
                let mut s = format!(" from cpuset {cs}");
                if let Some(id) = self.obj_with_cpuset(cs) {
                    let _ = write!(s, " ({})", self.memattr_obj(id));
                }
                s
            }
            Initiator::Object(id) => format!(" from {}", self.memattr_obj(*id)),
        }
    }

    /// Memory attributes, predefined ones first in a convenient order, then
    /// custom ones by id.  `show_all` adds `Capacity`, `Locality` and
    /// attributes without values.
    pub(super) fn memattrs(&mut self, show_all: bool) {
        let t = self.topo;
        let find = |name: &str| t.memattrs.iter().find(|m| m.name == name);
        for id in [0usize, 1, 2, 4, 5, 3, 6, 7] {
            let (name, flags) = memattrs::PREDEFINED[id];
            if id <= 1 {
                if !show_all {
                    continue;
                }
                let _ = writeln!(
                    self.out,
                    "Memory attribute #{id} name `{name}' flags {flags}"
                );
                for &n in t.level(Depth::NumaNode) {
                    let o = t.obj(n);
                    // hwloc prints an infinite weight (-1) as unsigned 64-bit.
                    let value = if id == 0 {
                        o.numa().map(|a| a.local_memory).unwrap_or(0)
                    } else {
                        o.cpuset
                            .as_ref()
                            .map(|c| weight(c.weight()) as u64)
                            .unwrap_or(0)
                    };
                    let _ = writeln!(self.out, "  {} = {value}", self.memattr_obj(n));
                }
                continue;
            }
            self.memattr(id, name, flags, find(name), show_all);
        }
        let customs = t
            .memattrs
            .iter()
            .filter(|m| !memattrs::PREDEFINED.iter().any(|(n, _)| *n == m.name));
        for (k, m) in customs.enumerate() {
            self.memattr(8 + k, &m.name, m.flags, Some(m), show_all);
        }
    }

    fn memattr(&mut self, id: usize, name: &str, flags: u64, m: Option<&MemAttr>, show_all: bool) {
        // Targets in order of first appearance, each with its values.
        let mut targets: Vec<(ObjId, Vec<InitiatorValue>)> = Vec::new();
        if let Some(m) = m {
            let alive = |id: ObjId| self.topo.get(id).is_some();
            for v in &m.values {
                let init_alive = match &v.initiator {
                    Some(Initiator::Object(o)) => alive(*o),
                    _ => true,
                };
                if !alive(v.target) || !init_alive {
                    continue;
                }
                let entry = match targets.iter_mut().position(|(t, _)| *t == v.target) {
                    Some(i) => &mut targets[i].1,
                    None => {
                        targets.push((v.target, Vec::new()));
                        &mut targets.last_mut().expect("just pushed").1
                    }
                };
                entry.push((v.initiator.as_ref(), v.value));
            }
        }
        if !show_all && targets.is_empty() {
            return;
        }
        let _ = writeln!(
            self.out,
            "Memory attribute #{id} name `{name}' flags {flags}"
        );
        let need_initiator = flags & memattrs::flags::NEED_INITIATOR != 0;
        for (target, values) in &targets {
            let tname = self.memattr_obj(*target);
            if !need_initiator {
                if let Some((_, value)) = values.first() {
                    let _ = writeln!(self.out, "  {tname} = {value}");
                }
                continue;
            }
            for (init, value) in values {
                let from = match init {
                    Some(i) => self.memattr_initiator(i),
                    None => String::new(),
                };
                let _ = writeln!(self.out, "  {tname} = {value}{from}");
            }
        }
    }
}
