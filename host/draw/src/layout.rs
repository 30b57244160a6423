//! lstopo's layout (hwloc 2.9, `utils/lstopo/lstopo-draw.c`), reimplemented.
//!
//! Like lstopo, the layout runs in two passes: a preparing pass computes
//! each object's size and the relative position of its children, bottom up;
//! the drawing pass walks the tree again and emits boxes, lines and texts at
//! absolute positions.  All arithmetic is lstopo's unsigned integer
//! arithmetic (wrapping where C would wrap) and its single-precision
//! floating point for the rectangle packing, so that every coordinate
//! matches.

use wloc_core::object::{BridgeUpstream, Depth};
use wloc_core::{ObjId, ObjKind, ObjType, Topology};

use crate::labels::{self, truncate};
use crate::{
    Backend, Color, DrawOptions, IndexType, Item, KIND_ALL, KIND_IO, KIND_MEMORY, KIND_MISC,
    KIND_NORMAL, Legend, Orient, Scene,
};

/// One of the four zones where a parent places children.
#[derive(Clone, Copy, Debug, Default)]
struct Zone {
    kinds: u8,
    width: u32,
    height: u32,
    xrel: u32,
    yrel: u32,
    boxed: bool,
}

/// One line of label text.
#[derive(Clone, Debug, Default)]
struct TextLine {
    text: String,
    width: u32,
    xoffset: u32,
}

/// Custom colours from an object's `lstopoStyle` info.
#[derive(Clone, Copy, Debug, Default)]
struct Style {
    bg: Option<Color>,
    t: Option<Color>,
    t2: Option<Color>,
}

/// What lstopo keeps per object (`struct lstopo_obj_userdata`).
#[derive(Clone, Debug, Default)]
struct Ud {
    pci_collapsed: i32,
    factorized: i32,
    cpukind_style: u32,
    style: Style,
    width: u32,
    height: u32,
    children: Zone,
    above: Zone,
    right: Zone,
    below: Zone,
    xrel: u32,
    yrel: u32,
    internal_xoffset: u32,
    text: Vec<TextLine>,
    textwidth: u32,
}

struct Colors {
    bg: Color,
    t: Color,
    t2: Color,
}

struct Layout<'a> {
    topo: &'a Topology,
    o: &'a DrawOptions,
    backend: Backend,
    ud: Vec<Ud>,
    /// Number of normal levels (hwloc's topology depth).
    depth: u32,
    need_pci_domain: bool,
    gridsize: u32,
    fontsize: u32,
    linespacing: u32,
    items: Vec<Item>,
}

/// The layer of the root and the legend; each level drawn inside is one
/// less (two for the children of an object), as lstopo counts them.
const ROOT_DEPTH: u32 = 100;

/// Lays `topo` out as lstopo does for `backend`.
pub fn layout(topo: &Topology, opts: &DrawOptions, backend: Backend) -> Scene {
    let n = topo.ids().max().map(|m| m + 1).unwrap_or(0);
    let (gridsize, fontsize, linespacing) = match backend {
        // The text art always uses 10 for all three.
        Backend::Ascii => (10, 10, 10),
        Backend::Svg | Backend::Fig | Backend::Tikz => {
            (opts.gridsize, opts.fontsize, opts.linespacing)
        }
    };
    let mut l = Layout {
        topo,
        o: opts,
        backend,
        ud: vec![Ud::default(); n],
        depth: topo.depth(),
        need_pci_domain: need_pci_domain(topo),
        gridsize,
        fontsize,
        linespacing,
        items: Vec::new(),
    };
    l.cpukind_styles();
    l.factorize(topo.root());
    if opts.pci_collapse {
        l.collapse();
    }
    l.custom_styles();
    l.run()
}

/// Whether PCI bus ids need their domain (`lstopo_check_pci_domains`).
fn need_pci_domain(t: &Topology) -> bool {
    if t.level(Depth::PciDevice)
        .iter()
        .any(|&id| t.obj(id).pci().is_some_and(|p| p.domain != 0))
    {
        return true;
    }
    for &id in t.level(Depth::Bridge) {
        match t.obj(id).bridge().map(|b| &b.upstream) {
            Some(BridgeUpstream::Pci(p)) if p.domain != 0 => return true,
            Some(BridgeUpstream::Pci(_)) => {}
            _ => break,
        }
    }
    false
}

/// A C-style `sscanf("%02x%02x%02x")` over `s` followed by nothing in
/// particular: three hex fields of one or two digits.
fn scan_rgb(s: &str) -> Option<Color> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = [0u8; 3];
    for slot in &mut out {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        let mut v = 0u32;
        while i < b.len() && i - start < 2 && b[i].is_ascii_hexdigit() {
            v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
            i += 1;
        }
        if i == start {
            return None;
        }
        *slot = v as u8;
    }
    Some(Color::rgb(out[0], out[1], out[2]))
}

/// lstopo's single-precision rectangle score: close to 1 is better.
fn rectangle_score(width: u32, height: u32, ratio: f32) -> f32 {
    let score = width as f32 / height as f32 / ratio;
    if score > 1.0 { 1.0 / score } else { score }
}

impl<'a> Layout<'a> {
    // ------------------------------------------------------------ marks

    fn cpukind_styles(&mut self) {
        if self.topo.cpukinds.is_empty() {
            return;
        }
        for (i, k) in self.topo.cpukinds.iter().enumerate() {
            for pu in self.topo.objs_by_type(ObjType::PU) {
                let o = self.topo.obj(pu);
                if o.cpuset
                    .as_ref()
                    .is_some_and(|c| c.is_included_in(&k.cpuset))
                    && o.cpuset.as_ref().is_some_and(|c| !c.is_empty())
                {
                    self.ud[pu].cpukind_style = i as u32;
                }
            }
        }
    }

    /// Whether `set` lies in a single CPU kind, or in none
    /// (`hwloc_cpukinds_get_by_cpuset` does not fail with EXDEV).
    fn single_cpukind(&self, id: ObjId) -> bool {
        let Some(set) = self.topo.obj(id).cpuset.as_ref() else {
            return true;
        };
        if set.is_empty() {
            return true;
        }
        for k in &self.topo.cpukinds {
            if set.is_included_in(&k.cpuset) {
                return true;
            }
            if set.intersects(&k.cpuset) {
                return false;
            }
        }
        true
    }

    fn factorize(&mut self, id: ObjId) {
        let t = self.topo;
        let o = t.obj(id);
        let Some(&first) = o.children().first() else {
            return;
        };
        let arity = o.arity() as u32;
        if o.symmetric_subtree()
            && arity > self.o.factorize_min[t.obj(first).obj_type.index()]
            && (t.cpukinds.is_empty() || self.single_cpukind(id))
        {
            for &c in o.children() {
                let co = t.obj(c);
                let ti = co.obj_type.index();
                let rank = co.sibling_rank();
                let (f, l) = (self.o.factorize_first[ti], self.o.factorize_last[ti]);
                self.ud[c].factorized = if rank < f || rank >= arity.wrapping_sub(l) {
                    0
                } else if rank == f {
                    1
                } else {
                    -1
                };
            }
        }
        for &c in o.children() {
            self.factorize(c);
        }
    }

    fn collapse(&mut self) {
        for (id, n) in pci_collapsing(self.topo) {
            self.ud[id].pci_collapsed = n;
        }
    }

    fn custom_styles(&mut self) {
        for id in self.topo.ids() {
            let Some(s) = self.topo.obj(id).info("lstopoStyle") else {
                continue;
            };
            let mut st = Style::default();
            for part in s.split(';') {
                if let Some(c) =
                    scan_rgb(part).or_else(|| part.strip_prefix("Background=#").and_then(scan_rgb))
                {
                    st.bg = Some(c);
                    if st.t.is_none() {
                        let sum = u32::from(c.r) + u32::from(c.g) + u32::from(c.b);
                        st.t = Some(if sum < 0xff {
                            self.o.palette.white
                        } else {
                            self.o.palette.black
                        });
                    }
                } else if let Some(c) = part.strip_prefix("Text=#").and_then(scan_rgb) {
                    st.t = Some(c);
                } else if let Some(c) = part.strip_prefix("Text2=#").and_then(scan_rgb) {
                    st.t2 = Some(c);
                }
            }
            self.ud[id].style = st;
        }
    }

    // ------------------------------------------------------------ helpers

    fn text_width(&self, len: usize) -> u32 {
        let len = len as u32;
        match self.backend {
            Backend::Svg => len.wrapping_mul(self.fontsize * 11 / 9) / 2,
            Backend::Fig => len.wrapping_mul(self.fontsize * 11 / 10) / 2,
            Backend::Tikz => len.wrapping_mul(self.fontsize * 13 / 9).wrapping_mul(10) / 22,
            Backend::Ascii => len.wrapping_mul(10) / 2,
        }
    }

    fn ty(&self, id: ObjId) -> ObjType {
        self.topo.obj(id).obj_type
    }

    fn arity(&self, id: ObjId) -> u32 {
        self.topo.obj(id).arity() as u32
    }

    /// The children of `parent` of the given kinds, memory first, without
    /// the hidden ones (factorized away, collapsed PCI functions).
    fn children(&self, parent: ObjId, kinds: u8) -> Vec<ObjId> {
        let p = self.topo.obj(parent);
        let mut lists: Vec<&[ObjId]> = Vec::new();
        if kinds & KIND_MEMORY != 0 {
            lists.push(p.memory_children());
        }
        if kinds & KIND_NORMAL != 0 {
            lists.push(p.children());
        }
        if kinds & KIND_IO != 0 {
            lists.push(p.io_children());
        }
        if kinds & KIND_MISC != 0 {
            lists.push(p.misc_children());
        }
        let arity = p.arity() as u32;
        lists
            .into_iter()
            .flatten()
            .copied()
            .filter(|&c| {
                let t = self.ty(c);
                let u = &self.ud[c];
                let factorized_away = arity > self.o.factorize_min[t.index()] && u.factorized < 0;
                let collapsed_away =
                    self.o.pci_collapse && t == ObjType::PCIDevice && u.pci_collapsed == -1;
                !factorized_away && !collapsed_away
            })
            .collect()
    }

    fn colors(&self, id: ObjId) -> Colors {
        let p = &self.o.palette;
        let o = self.topo.obj(id);
        let os = o.os_index.unwrap_or(u32::MAX);
        let bg = match o.obj_type {
            ObjType::Machine => p.machine,
            ObjType::Group => {
                let mut c = p.group;
                let mut up = o.parent();
                while let Some(a) = up {
                    if self.ty(a) == ObjType::Package {
                        c = p.group_in_package;
                        break;
                    }
                    up = self.topo.obj(a).parent();
                }
                c
            }
            ObjType::Misc => {
                if o.subtype.as_deref() == Some("Process") {
                    p.process
                } else {
                    p.misc
                }
            }
            ObjType::NUMANode => {
                if !self.topo.allowed_nodeset.is_set(os) {
                    p.disallowed
                } else if self.o.mem_binding.as_ref().is_some_and(|b| b.is_set(os)) {
                    p.binding
                } else {
                    p.numanode
                }
            }
            ObjType::Package => p.package,
            ObjType::Die => p.die,
            ObjType::Core => p.core,
            ObjType::PU => {
                if !self.topo.allowed_cpuset.is_set(os) {
                    p.disallowed
                } else if self.o.cpu_binding.as_ref().is_some_and(|b| b.is_set(os)) {
                    p.binding
                } else {
                    p.pu
                }
            }
            ObjType::Bridge => p.bridge,
            ObjType::PCIDevice => p.pcidev,
            ObjType::OSDevice => p.osdev,
            _ => p.cache,
        };
        let s = self.ud[id].style;
        Colors {
            bg: s.bg.unwrap_or(bg),
            t: s.t.unwrap_or(p.black),
            t2: s.t2.unwrap_or(p.black),
        }
    }

    fn cpukind_style(&self, id: ObjId) -> u32 {
        if self.o.show_cpukinds {
            self.ud[id].cpukind_style
        } else {
            0
        }
    }

    #[allow(clippy::too_many_arguments)] // lstopo's box callback, argument for argument
    fn push_box(
        &mut self,
        depth: u32,
        c: Color,
        x: u32,
        w: u32,
        y: u32,
        h: u32,
        obj: Option<ObjId>,
        id: u32,
    ) {
        let cpukind_style = obj.map(|o| self.cpukind_style(o)).unwrap_or(0);
        self.items.push(Item::Box {
            obj,
            depth,
            id,
            x,
            y,
            width: w,
            height: h,
            fill: c,
            cpukind_style,
        });
    }

    #[allow(clippy::too_many_arguments)] // lstopo's line callback, argument for argument
    fn push_line(&mut self, depth: u32, x1: u32, y1: u32, x2: u32, y2: u32, obj: ObjId, id: u32) {
        self.items.push(Item::Line {
            obj: Some(obj),
            depth,
            id,
            x1,
            y1,
            x2,
            y2,
        });
    }

    #[allow(clippy::too_many_arguments)] // lstopo's text callback, argument for argument
    fn push_text(
        &mut self,
        depth: u32,
        c: Color,
        x: u32,
        y: u32,
        text: &str,
        obj: Option<ObjId>,
        id: u32,
    ) {
        let cpukind_style = obj.map(|o| self.cpukind_style(o)).unwrap_or(0);
        self.items.push(Item::Text {
            obj,
            depth,
            id,
            x,
            y,
            text: text.to_string(),
            color: c,
            cpukind_style,
            is_date: false,
        });
    }

    // ------------------------------------------------------------ text

    fn show_text(&self, t: ObjType) -> bool {
        self.o.show_text[t.index()]
    }

    fn prepare_text(&mut self, id: ObjId) {
        let t = self.ty(id);
        self.ud[id].text.clear();
        self.ud[id].textwidth = 0;
        if !self.show_text(t) {
            return;
        }
        let o = self.topo.obj(id);
        let ti = t.index();
        let (mut first, first_len) = if t == ObjType::PCIDevice && self.o.show_attrs[ti] {
            let mut base = labels::obj_label(self.topo, id, self.o);
            truncate(&mut base, 64);
            let collapsed = self.ud[id].pci_collapsed;
            let bus = labels::busid(self.topo, id, collapsed, self.need_pci_domain);
            let s = if self.o.pci_collapse && collapsed > 1 {
                format!("{collapsed} x {{ {base} {bus} }}")
            } else {
                format!("{base} {bus}")
            };
            let n = s.len();
            (s, n)
        } else {
            let s = labels::obj_label(self.topo, id, self.o);
            let n = s.len();
            (s, n)
        };
        // The first width counts what snprintf wanted to write, as lstopo.
        truncate(&mut first, 128);
        let mut lines = vec![(first, first_len)];
        if t == ObjType::PU && self.o.index_type == IndexType::Default && self.o.show_indexes[ti] {
            let s = format!("P#{}", o.os_index.unwrap_or(u32::MAX));
            let n = s.len();
            lines.push((s, n));
        }
        if self.o.show_attrs[ti] && t == ObjType::OSDevice {
            for s in labels::osdev_lines(o) {
                if lines.len() >= 4 {
                    break;
                }
                let n = s.len();
                lines.push((s, n));
            }
        }
        let mut tw = 0;
        let mut text = Vec::new();
        for (s, n) in lines {
            let w = self.text_width(n);
            tw = tw.max(w);
            text.push(TextLine {
                text: s,
                width: w,
                xoffset: 0,
            });
        }
        self.ud[id].text = text;
        self.ud[id].textwidth = tw;
    }

    fn draw_text(&mut self, id: ObjId, c: Color, depth: u32, x: u32, y: u32) {
        if !self.show_text(self.ty(id)) {
            return;
        }
        let (fs, ls) = (self.fontsize, self.linespacing);
        let lines = self.ud[id].text.clone();
        for (i, l) in lines.iter().enumerate() {
            let i = i as u32;
            self.push_text(
                depth,
                c,
                x.wrapping_add(l.xoffset),
                y.wrapping_add(i.wrapping_mul(ls + fs)),
                &l.text,
                Some(id),
                i,
            );
        }
    }

    // ------------------------------------------------------------ placing

    fn find_children_rectangle(
        &self,
        children: &[ObjId],
        separator: u32,
        ratio: f32,
    ) -> (u32, u32) {
        let n = children.len() as u32;
        let (mut totw, mut toth, mut area) = (0u32, 0u32, 0u32);
        for &c in children {
            let u = &self.ud[c];
            totw = totw.wrapping_add(u.width + separator);
            toth = toth.wrapping_add(u.height + separator);
            area = area.wrapping_add((u.width + separator).wrapping_mul(u.height + separator));
        }
        let avgw = totw / n;
        let avgh = toth / n;
        // lstopo 2.9 first looks for an exact rectangle, but its loop
        // condition compares the still-zero row count, so that search never
        // runs: only the incomplete-last-row estimate below decides.
        let ideal = ((area as f32 / ratio) as f64).sqrt() as f32;
        // `as` saturates where C's conversion would be undefined (zero
        // sizes with a zero grid); the divisions below then stay defined.
        let mut rows = (ideal / avgh as f32) as u32;
        let ceil_div = |n: u32, r: u32| if r != 0 { n.div_ceil(r) } else { 1 };
        let mut columns = ceil_div(n, rows);
        let under = rectangle_score(columns.wrapping_mul(avgw), rows.wrapping_mul(avgh), ratio);
        rows = rows.saturating_add(1);
        columns = ceil_div(n, rows);
        let over = rectangle_score(columns.wrapping_mul(avgw), rows.wrapping_mul(avgh), ratio);
        if rows > 1 && under > over {
            rows -= 1;
            columns = ceil_div(n, rows);
        }
        (rows, columns)
    }

    fn place_horiz(&mut self, kids: &[ObjId], border: u32, sep: u32) -> (u32, u32) {
        let mut curx = 0u32;
        let mut maxh = 0;
        for &c in kids {
            let u = &mut self.ud[c];
            u.xrel = curx.wrapping_add(border);
            u.yrel = border;
            maxh = maxh.max(u.height);
            curx = curx.wrapping_add(sep).wrapping_add(u.width);
        }
        (
            curx.wrapping_sub(sep).wrapping_add(2 * border),
            maxh + 2 * border,
        )
    }

    fn place_vert(&mut self, parent: ObjId, kids: &[ObjId], border: u32, sep: u32) -> (u32, u32) {
        let mut cury = 0u32;
        let mut maxw = 0;
        let g = self.gridsize;
        let fs = self.fontsize;
        let bridge_speed = self.ty(parent) == ObjType::Bridge && self.show_text(ObjType::Bridge);
        for &c in kids {
            let speed = self.link_speed(c);
            let u = &mut self.ud[c];
            let mut h = u.height;
            u.xrel = border;
            u.yrel = cury.wrapping_add(border);
            maxw = maxw.max(u.width);
            if bridge_speed && speed != 0.0 && h <= g + fs {
                h = g + fs;
            }
            cury = cury.wrapping_add(sep).wrapping_add(h);
        }
        (
            maxw + 2 * border,
            cury.wrapping_sub(sep).wrapping_add(2 * border),
        )
    }

    fn place_rect(&mut self, parent: ObjId, kids: &[ObjId], border: u32, sep: u32) -> (u32, u32) {
        let ratio = if self.ty(parent) == ObjType::Core {
            1.0f32 / (4.0f32 / 3.0f32)
        } else {
            4.0f32 / 3.0f32
        };
        let (_rows, columns) = self.find_children_rectangle(kids, sep, ratio);
        let (mut rowwidth, mut maxheight, mut totwidth, mut totheight) = (0u32, 0u32, 0u32, 0u32);
        for (i, &c) in kids.iter().enumerate() {
            let i = i as u32;
            if i != 0 && columns != 0 && i.is_multiple_of(columns) {
                totwidth = totwidth.max(rowwidth);
                rowwidth = 0;
                totheight = totheight.wrapping_add(maxheight + sep);
                maxheight = 0;
            }
            let u = &mut self.ud[c];
            u.xrel = rowwidth.wrapping_add(border);
            u.yrel = totheight.wrapping_add(border);
            rowwidth = rowwidth.wrapping_add(u.width + sep);
            maxheight = maxheight.max(u.height);
        }
        totwidth = totwidth.max(rowwidth);
        totwidth = totwidth.wrapping_sub(sep);
        totheight = totheight.wrapping_add(maxheight);
        (
            totwidth.wrapping_add(2 * border),
            totheight.wrapping_add(2 * border),
        )
    }

    fn place_zone(
        &mut self,
        parent: ObjId,
        kinds: u8,
        orient: Orient,
        border: u32,
        sep: u32,
    ) -> (u32, u32) {
        let kids = self.children(parent, kinds);
        if kids.is_empty() {
            // lstopo only places zones that have visible children in
            // practice; an empty zone takes no room.
            return (0, 0);
        }
        match orient {
            Orient::Horiz => self.place_horiz(&kids, border, sep),
            Orient::Vert => self.place_vert(parent, &kids, border, sep),
            _ => self.place_rect(parent, &kids, border, sep),
        }
    }

    fn link_speed(&self, id: ObjId) -> f32 {
        let o = self.topo.obj(id);
        match o.obj_type {
            ObjType::PCIDevice => o.pci().map(|p| p.linkspeed).unwrap_or(0.0),
            ObjType::Bridge => match o.bridge().map(|b| &b.upstream) {
                Some(BridgeUpstream::Pci(p)) => p.linkspeed,
                _ => 0.0,
            },
            _ => 0.0,
        }
    }

    fn place_children(&mut self, parent: ObjId, xrel: u32, mut yrel: u32) {
        let t = self.topo;
        let p = t.obj(parent);
        let pt = p.obj_type;
        let g = self.gridsize;
        let border = g;
        let separator = g;
        let mut separator_below_cache = g;
        let mut normal_sep = g;
        let mut totwidth = self.ud[parent].width;
        let mut totheight = self.ud[parent].height;
        let is_memory = matches!(pt, ObjType::NUMANode | ObjType::MemCache);
        let is_io = matches!(pt, ObjType::Bridge | ObjType::PCIDevice | ObjType::OSDevice);
        let is_cache = pt.is_cache() || pt == ObjType::MemCache;

        let mut main_orient = self.o.force_orient[pt.index()];
        let mut right_orient = self.o.right_force_orient;
        if right_orient == Orient::None {
            right_orient = self.o.force_orient[pt.index()];
        }
        let mut below_orient = self.o.below_force_orient;
        if below_orient == Orient::None {
            below_orient = self.o.force_orient[pt.index()];
        }

        let existing = (if p.arity() > 0 { KIND_NORMAL } else { 0 })
            | (if !p.memory_children().is_empty() {
                KIND_MEMORY
            } else {
                0
            })
            | (if !p.io_children().is_empty() {
                KIND_IO
            } else {
                0
            })
            | (if !p.misc_children().is_empty() {
                KIND_MISC
            } else {
                0
            });
        let order = self.o.children_order;
        let mut main = Zone {
            kinds: existing,
            ..Zone::default()
        };
        let mut above = Zone::default();
        let mut right = Zone::default();
        let mut below = Zone::default();
        if !is_memory && order.memory_above {
            main.kinds &= !KIND_MEMORY;
            above.kinds |= existing & KIND_MEMORY;
        }
        if !is_io && order.io_right {
            main.kinds &= !KIND_IO;
            right.kinds |= existing & KIND_IO;
        }
        if !is_io && order.io_below {
            main.kinds &= !KIND_IO;
            below.kinds |= existing & KIND_IO;
        }
        if pt != ObjType::Misc && order.misc_right {
            main.kinds &= !KIND_MISC;
            right.kinds |= existing & KIND_MISC;
        }
        if pt != ObjType::Misc && order.misc_below {
            main.kinds &= !KIND_MISC;
            below.kinds |= existing & KIND_MISC;
        }

        if pt == ObjType::Bridge {
            main_orient = Orient::Vert;
        }
        if main_orient == Orient::None
            && p.symmetric_subtree()
            && !p.children().is_empty()
            && p.arity() as u32 > self.o.factorize_min[self.ty(p.children()[0]).index()]
        {
            main_orient = Orient::Horiz;
        }
        if main_orient == Orient::None && !p.memory_children().is_empty() && !order.memory_above {
            main_orient = Orient::Horiz;
        }

        // Kinds and boxes are recorded even when no child turns out visible.
        {
            let u = &mut self.ud[parent];
            u.children = main;
            u.above = above;
            u.right = right;
            u.below = below;
        }

        let all = self.children(parent, KIND_ALL);
        let mut normal_are_pus = p.arity() > 0;
        for &c in &all {
            self.prepare(c);
            let ct = self.ty(c);
            if ct.kind() == ObjKind::Normal && ct != ObjType::PU {
                normal_are_pus = false;
            }
        }
        if all.is_empty() {
            return;
        }
        if normal_are_pus {
            normal_sep = 0;
        }
        if is_cache {
            if normal_are_pus || pt == ObjType::MemCache {
                separator_below_cache = 0;
            }
            yrel = yrel.wrapping_add(separator_below_cache);
        }

        let (mut cw, mut ch) = (0, 0);
        if main.kinds != 0 {
            (cw, ch) = self.place_zone(parent, main.kinds, main_orient, 0, normal_sep);
        }
        let (mut rw, mut rh) = (0, 0);
        if right.kinds != 0 {
            (rw, rh) = self.place_zone(parent, right.kinds, right_orient, 0, separator);
        }
        let (mut bw, mut bh) = (0, 0);
        if below.kinds != 0 {
            (bw, bh) = self.place_zone(parent, below.kinds, below_orient, 0, separator);
        }
        let mut mrb_w = cw + rw + if cw != 0 && rw != 0 { separator } else { 0 };
        if mrb_w < bw {
            mrb_w = bw;
        }
        let (mut aw, mut ah) = (0u32, 0u32);
        if above.kinds != 0 {
            let mem_first = p.memory_children()[0];
            let need_box = !is_memory
                && p.memory_children().len() + t.obj(mem_first).memory_children().len() > 1;
            (aw, ah) = self.place_zone(
                parent,
                above.kinds,
                Orient::Horiz,
                if need_box { border } else { 0 },
                separator,
            );
            if pt == ObjType::MemCache {
                ah = ah.wrapping_sub(separator);
            }
            if need_box {
                if aw < cw {
                    aw = mrb_w;
                }
                above.boxed = true;
            } else {
                let cu = &mut self.ud[mem_first];
                if cu.width < cw {
                    cu.width = mrb_w;
                    aw = mrb_w;
                }
            }
        }

        main.width = cw;
        main.height = ch;
        main.xrel = xrel;
        main.yrel = yrel;
        if above.kinds != 0 {
            above.width = aw;
            above.height = ah;
            above.xrel = xrel;
            above.yrel = yrel;
            main.yrel = main.yrel.wrapping_add(ah + separator);
        }
        if right.kinds != 0 {
            right.width = rw;
            right.height = rh;
            right.xrel = main.xrel + cw + if cw != 0 { separator } else { 0 };
            right.yrel = main.yrel;
        }
        let mrb_h;
        if below.kinds != 0 {
            below.width = bw;
            below.height = bh;
            below.xrel = main.xrel;
            if right.kinds != 0 && bw > cw && rh > ch {
                below.yrel = main.yrel + rh + separator;
                mrb_h = rh + bh + separator;
            } else {
                below.yrel = main.yrel + ch + if ch != 0 { separator } else { 0 };
                mrb_h = ch + bh + if ch != 0 { separator } else { 0 };
            }
        } else {
            mrb_h = ch.max(rh);
        }

        if is_cache {
            totwidth = totwidth.max(mrb_w);
            if mrb_h != 0 {
                totheight = totheight.wrapping_add(mrb_h + separator_below_cache);
            }
            if above.kinds != 0 {
                totheight = totheight.wrapping_add(ah.wrapping_add(separator));
                totwidth = totwidth.max(aw);
            }
        } else if pt == ObjType::Bridge {
            if cw != 0 {
                totwidth += cw;
            }
            totheight = totheight.max(ch);
        } else {
            totwidth = totwidth.max(mrb_w + 2 * border);
            if mrb_h != 0 {
                totheight = totheight.wrapping_add(mrb_h + border);
            }
            if above.kinds != 0 {
                totheight = totheight.wrapping_add(ah.wrapping_add(separator));
                totwidth = totwidth.max(aw.wrapping_add(2 * border));
            }
        }
        let u = &mut self.ud[parent];
        u.children = main;
        u.above = above;
        u.right = right;
        u.below = below;
        u.width = totwidth;
        u.height = totheight;
    }

    // ------------------------------------------------------------ objects

    fn is_factorized(&self, id: ObjId) -> bool {
        let o = self.topo.obj(id);
        self.ud[id].factorized == 1
            && o.parent()
                .is_some_and(|p| self.arity(p) > self.o.factorize_min[o.obj_type.index()])
    }

    fn missing_separator(&self, id: ObjId) -> u32 {
        match self.topo.obj(id).depth() {
            Depth::Normal(d) if d + 1 == self.depth => self.gridsize,
            _ => 0,
        }
    }

    fn prepare(&mut self, id: ObjId) {
        let t = self.ty(id);
        let (g, fs, ls) = (self.gridsize, self.fontsize, self.linespacing);
        match t {
            ObjType::Bridge => {
                let speedwidth = if self.show_text(ObjType::Bridge) {
                    fs + g
                } else {
                    0
                };
                self.ud[id].width = 3 * g + speedwidth;
                self.ud[id].height = g;
                self.place_children(id, 3 * g + speedwidth, 0);
            }
            ObjType::PCIDevice => {
                let ov = self.overlaid_offset(id);
                self.prepare_text(id);
                let u = &mut self.ud[id];
                u.width = g + ov;
                u.height = g + ov;
                if !u.text.is_empty() {
                    u.width += u.textwidth + g;
                    u.height += fs + g;
                }
                let h = u.height;
                self.place_children(id, g, h);
            }
            _ if self.is_factorized(id) => self.prepare_factorized(id),
            _ if t.is_cache() || t == ObjType::MemCache => {
                self.prepare_text(id);
                let u = &mut self.ud[id];
                u.width = g;
                u.height = g;
                if !u.text.is_empty() {
                    u.width += u.textwidth + g;
                    u.height += fs + g;
                }
                let h = u.height;
                self.place_children(id, 0, h);
            }
            _ => {
                if t != ObjType::PU {
                    self.prepare_text(id);
                }
                let u = &mut self.ud[id];
                u.width = g;
                u.height = g;
                let n = u.text.len() as u32;
                if n > 0 {
                    u.width += u.textwidth + g;
                    u.height += fs + (fs + ls) * (n - 1) + g;
                }
                let h = u.height;
                self.place_children(id, g, h);
            }
        }
    }

    fn overlaid_offset(&self, id: ObjId) -> u32 {
        let c = self.ud[id].pci_collapsed;
        if !(self.o.pci_collapse && c > 1) {
            return 0;
        }
        let g = self.gridsize;
        let ov = if c > 2 { g } else { g / 2 };
        if self.backend == Backend::Ascii {
            ov * 2
        } else {
            ov
        }
    }

    fn prepare_factorized(&mut self, id: ObjId) {
        let (g, fs, ls) = (self.gridsize, self.fontsize, self.linespacing);
        let ms = self.missing_separator(id);
        let parent = self.topo.obj(id).parent().unwrap_or(id);
        let text = format!("{}x total", self.arity(parent));
        let tw = self.text_width(text.len());
        let u = &mut self.ud[id];
        u.width = g * 5;
        u.height = g * 2 + ls + fs + g;
        u.text = vec![TextLine {
            text,
            width: tw,
            xoffset: 0,
        }];
        if tw > u.width {
            u.width = tw;
        }
        u.internal_xoffset = 0;
        // The SVG writer's text widths are approximate: lstopo then leaves
        // the dots and the text left-aligned.  The text art measures
        // exactly and centres them.
        if self.backend == Backend::Ascii {
            if u.width > tw {
                u.text[0].xoffset = (u.width - tw) / 2;
            } else {
                u.internal_xoffset = (tw - u.width) / 2;
            }
        }
        u.width += 2 * ms;
    }

    fn draw(&mut self, id: ObjId, depth: u32, x: u32, y: u32) {
        let t = self.ty(id);
        let (g, fs, ls) = (self.gridsize, self.fontsize, self.linespacing);
        match t {
            ObjType::Bridge => self.draw_bridge(id, depth, x, y),
            ObjType::PCIDevice => {
                let ov = self.overlaid_offset(id);
                let (w, h) = (self.ud[id].width, self.ud[id].height);
                let c = self.colors(id);
                let collapsed = self.ud[id].pci_collapsed;
                // Two more layers for the boxes of collapsed functions.
                let d = if self.o.pci_collapse && collapsed > 1 {
                    depth.wrapping_sub(2)
                } else {
                    depth
                };
                if self.o.pci_collapse && collapsed > 1 {
                    self.push_box(
                        d.wrapping_add(2),
                        c.bg,
                        x + ov,
                        w - ov,
                        y + ov,
                        h - ov,
                        Some(id),
                        2,
                    );
                    if collapsed > 2 {
                        self.push_box(
                            d.wrapping_add(1),
                            c.bg,
                            x + ov / 2,
                            w - ov,
                            y + ov / 2,
                            h - ov,
                            Some(id),
                            1,
                        );
                    }
                    self.push_box(d, c.bg, x, w - ov, y, h - ov, Some(id), 0);
                } else {
                    self.push_box(d, c.bg, x, w, y, h, Some(id), 0);
                }
                self.draw_text(id, c.t, d.wrapping_sub(1), x + g, y + g);
                self.draw_children(id, d.wrapping_sub(1), x, y);
            }
            _ if self.is_factorized(id) => {
                let ms = self.missing_separator(id);
                let bo = self.ud[id].internal_xoffset;
                let to = self.ud[id].text[0].xoffset;
                let bg = self.colors(id).bg;
                let parent = self.topo.obj(id).parent().unwrap_or(id);
                let tc = self.colors(parent).t;
                for k in 0..3 {
                    self.push_box(depth, bg, x + ms + bo + 2 * k * g, g, y + g, g, Some(id), 0);
                }
                let text = self.ud[id].text[0].text.clone();
                self.push_text(depth, tc, x + ms + to, y + 2 * g + ls, &text, Some(id), 0);
            }
            _ if t.is_cache() || t == ObjType::MemCache => {
                let w = self.ud[id].width;
                let mut myh = g;
                if !self.ud[id].text.is_empty() {
                    myh += fs + g;
                }
                let mut myoff = 0;
                if self.ud[id].above.kinds != 0 {
                    myoff = self.ud[id].above.height + g;
                    self.ud[id].above.yrel = 0;
                }
                let c = self.colors(id);
                self.push_box(depth, c.bg, x, w, y + myoff, myh, Some(id), 0);
                self.draw_text(id, c.t, depth.wrapping_sub(1), x + g, y + g + myoff);
                self.draw_children(id, depth.wrapping_sub(1), x, y);
            }
            _ => {
                let (w, h) = (self.ud[id].width, self.ud[id].height);
                let c = self.colors(id);
                self.push_box(depth, c.bg, x, w, y, h, Some(id), 0);
                self.draw_text(id, c.t, depth.wrapping_sub(1), x + g, y + g);
                self.draw_children(id, depth.wrapping_sub(1), x, y);
            }
        }
    }

    fn draw_bridge(&mut self, id: ObjId, depth: u32, x: u32, y: u32) {
        let (g, fs) = (self.gridsize, self.fontsize);
        let speedwidth = if self.show_text(ObjType::Bridge) {
            fs + g
        } else {
            0
        };
        let c = self.colors(id);
        self.push_box(depth, c.bg, x, g, y + g / 2 - g / 2, g, Some(id), 0);
        self.push_line(depth, x + g, y + g / 2, x + 2 * g, y + g / 2, id, 0);
        if self.topo.obj(id).io_children().is_empty() {
            return;
        }
        let kids = self.children(id, KIND_ALL);
        let (mut ymin, mut ymax) = (u32::MAX, u32::MAX);
        for (i, &k) in kids.iter().enumerate() {
            let i = i as u32;
            let ymid = y + self.ud[k].yrel + g / 2;
            self.push_line(
                depth.wrapping_sub(1),
                x + 2 * g,
                ymid,
                x + 3 * g + speedwidth,
                ymid,
                id,
                i + 2,
            );
            if ymin == u32::MAX {
                ymin = ymid;
            }
            ymax = ymid;
            if self.show_text(ObjType::Bridge) {
                let speed = self.link_speed(k);
                if self.o.show_attrs[ObjType::Bridge.index()] && speed != 0.0 {
                    // lstopo prints into a 4-byte buffer.
                    let mut s = if speed >= 10.0 {
                        format!("{:.0}", speed as f64)
                    } else {
                        format!("{:.1}", speed as f64)
                    };
                    truncate(&mut s, 4);
                    self.push_text(
                        depth.wrapping_sub(1),
                        c.t2,
                        x + 5 * g / 2,
                        ymid + g / 2,
                        &s,
                        Some(id),
                        i + 2,
                    );
                }
            }
        }
        self.push_line(
            depth.wrapping_sub(1),
            x + 2 * g,
            ymin,
            x + 2 * g,
            ymax,
            id,
            1,
        );
        self.draw_children(id, depth.wrapping_sub(1), x, y);
    }

    fn draw_zone(&mut self, parent: ObjId, z: Zone, depth: u32, x: u32, y: u32) {
        if z.boxed {
            let c = self.o.palette.memories;
            self.push_box(depth, c, x, z.width, y, z.height, Some(parent), 1);
        }
        for c in self.children(parent, z.kinds) {
            let (cx, cy) = (self.ud[c].xrel, self.ud[c].yrel);
            self.draw(
                c,
                depth.wrapping_sub(1),
                x.wrapping_add(cx),
                y.wrapping_add(cy),
            );
        }
    }

    fn draw_children(&mut self, id: ObjId, depth: u32, x: u32, y: u32) {
        let u = &self.ud[id];
        let zones = [u.children, u.above, u.right, u.below];
        for z in zones {
            if z.kinds != 0 {
                self.draw_zone(id, z, depth, x.wrapping_add(z.xrel), y.wrapping_add(z.yrel));
            }
        }
    }

    // ------------------------------------------------------------ whole

    fn align_pu_text(&mut self) {
        let pus: Vec<ObjId> = self.topo.objs_by_type(ObjType::PU);
        let mut max = 0;
        for &pu in &pus {
            self.prepare_text(pu);
            max = max.max(self.ud[pu].textwidth);
        }
        for &pu in &pus {
            let u = &mut self.ud[pu];
            for l in &mut u.text {
                if l.width < max {
                    l.xoffset = (max - l.width) / 2;
                    l.width = max;
                }
            }
            u.textwidth = max;
        }
    }

    fn run(mut self) -> Scene {
        let topo = self.topo;
        let root = topo.root();
        let (g, fs, ls) = (self.gridsize, self.fontsize, self.linespacing);
        let mut default_lines: Vec<String> = Vec::new();
        let mut date_line = None;
        if self.o.legend == Legend::All {
            let host = topo
                .obj(root)
                .infos
                .iter()
                .chain(topo.infos.iter())
                .find(|i| i.name == "HostName")
                .map(|i| i.value.clone())
                .or_else(|| {
                    if topo.is_thissystem {
                        self.o.hostname.clone()
                    } else {
                        None
                    }
                });
            if let Some(h) = host.filter(|h| !h.is_empty()) {
                let mut s = format!("Host: {h}");
                truncate(&mut s, 128);
                default_lines.push(s);
            }
            if self.o.index_type != IndexType::Default {
                default_lines.push(format!(
                    "Indexes: {}",
                    if self.o.index_type == IndexType::Logical {
                        "logical"
                    } else {
                        "physical"
                    }
                ));
            }
            if let Some(d) = &self.o.date {
                date_line = Some(default_lines.len());
                let mut s = format!("Date: {d}");
                truncate(&mut s, 128);
                default_lines.push(s);
            }
        }
        let mut info_lines: Vec<String> = Vec::new();
        let mut append: Vec<String> = Vec::new();
        if self.o.legend != Legend::None {
            info_lines = topo
                .obj(root)
                .infos
                .iter()
                .filter(|i| i.name == "lstopoLegend")
                .map(|i| i.value.clone())
                .collect();
            append = self.o.legend_append.clone();
        }
        let maxtw = default_lines
            .iter()
            .chain(info_lines.iter())
            .chain(append.iter())
            .map(|s| self.text_width(s.len()))
            .max()
            .unwrap_or(0);

        self.align_pu_text();
        self.prepare(root);
        let rw = self.ud[root].width;
        let rh = self.ud[root].height;
        let width = rw.max(maxtw + 2 * g);
        let nlines = (default_lines.len() + info_lines.len() + append.len()) as u32;
        let legend_h = if self.o.legend != Legend::None && nlines > 0 {
            g + (nlines - 1) * (ls + fs) + fs + g
        } else {
            0
        };
        let height = rh + legend_h;

        self.draw(root, ROOT_DEPTH, 0, 0);
        if legend_h > 0 {
            let white = self.o.palette.white;
            let black = self.o.palette.black;
            self.push_box(ROOT_DEPTH, white, 0, width, rh, legend_h, None, 0);
            let mut offset = rh + g;
            let all: Vec<String> = default_lines
                .into_iter()
                .chain(info_lines)
                .chain(append)
                .collect();
            for (i, s) in all.iter().enumerate() {
                self.push_text(ROOT_DEPTH, black, g, offset, s, None, i as u32);
                if Some(i) == date_line
                    && let Some(Item::Text { is_date, .. }) = self.items.last_mut()
                {
                    *is_date = true;
                }
                offset += ls + fs;
            }
        }
        Scene {
            width,
            height,
            fontsize: fs,
            linespacing: ls,
            thickness: self.o.thickness,
            items: self.items,
        }
    }
}

/// lstopo's collapsing of identical PCI functions: along the PCI level,
/// a run of functions with the same parent, the same vendor, device and
/// subsystem ids and no children is shown as its first function, which
/// gets the run's length; the others get -1 (hidden).  Functions outside
/// such runs are not listed.
pub fn pci_collapsing(t: &Topology) -> Vec<(ObjId, i32)> {
    let childless =
        |id: ObjId| t.obj(id).io_children().is_empty() && t.obj(id).misc_children().is_empty();
    let mut out = Vec::new();
    let mut collapser: Option<ObjId> = None;
    let mut count = 0i32;
    for &id in t.level(Depth::PciDevice) {
        let o = t.obj(id);
        if let Some(c) = collapser {
            let co = t.obj(c);
            let same = match (o.pci(), co.pci()) {
                (Some(a), Some(b)) => {
                    a.vendor_id == b.vendor_id
                        && a.device_id == b.device_id
                        && a.subvendor_id == b.subvendor_id
                        && a.subdevice_id == b.subdevice_id
                }
                _ => false,
            };
            if childless(id) && o.parent() == co.parent() && same {
                out.push((id, -1));
                count += 1;
                continue;
            } else if count > 1 {
                out.push((c, count));
                collapser = None;
                count = 0;
            }
        }
        if childless(id) {
            collapser = Some(id);
            count = 1;
        }
    }
    if let (Some(c), true) = (collapser, count > 1) {
        out.push((c, count));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgb_styles_scan_like_sscanf() {
        assert_eq!(scan_rgb("ff0080"), Some(Color::rgb(255, 0, 128)));
        assert_eq!(scan_rgb("Background=#000000"), None);
        assert_eq!(scan_rgb("zz"), None);
    }

    #[test]
    fn scores_favour_four_thirds() {
        assert_eq!(rectangle_score(4, 3, 4.0 / 3.0), 1.0);
        assert!(rectangle_score(8, 3, 4.0 / 3.0) < 1.0);
    }
}
