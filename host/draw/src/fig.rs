//! lstopo's Xfig writer (`lstopo-fig.c`): a FIG 3.2 document of boxes,
//! lines and texts, coordinates scaled by 20 (1200 dpi), each item in the
//! layer of its drawing depth.

use std::fmt::Write;

use wloc_core::{ObjId, ObjType, Topology};

use crate::{Color, Item, Palette, Scene};

/// FIG units per picture unit.
const FACTOR: u32 = 20;

/// The colour numbers of a document: white and black are Xfig's own (7
/// and 0), others are declared from 32 on.
struct Colors {
    declared: Vec<(Color, u32)>,
    next: u32,
}

impl Colors {
    fn declare(&mut self, out: &mut String, c: Color) {
        let n = if c == Color::rgb(0xff, 0xff, 0xff) {
            7
        } else if c == Color::rgb(0, 0, 0) {
            0
        } else {
            let n = self.next;
            self.next += 1;
            let _ = writeln!(out, "0 {n} #{:02x}{:02x}{:02x}", c.r, c.g, c.b);
            n
        };
        self.declared.push((c, n));
    }

    /// The number of a colour drawn for an object that takes its colour
    /// from the palette entries `roles` (in `declared`'s first positions):
    /// lstopo declares every palette entry, even twice the same colour,
    /// and an object uses its own entry's number.  Other colours (from
    /// lstopoStyle infos) are found as lstopo finds them, newest first.
    fn number(&self, c: Color, roles: &[usize]) -> Option<u32> {
        roles
            .iter()
            .filter_map(|&r| self.declared.get(r))
            .find(|(d, _)| *d == c)
            .or_else(|| self.declared.iter().rev().find(|(d, _)| *d == c))
            .map(|(_, n)| *n)
    }
}

/// The palette entries (positions in [`Palette::in_declaration_order`])
/// a box of `obj` may take its colour from, its own first.
fn box_roles(topo: &Topology, obj: Option<ObjId>, id: u32) -> &'static [usize] {
    let Some(o) = obj else {
        return &[0];
    };
    let o = topo.obj(o);
    if id == 1 && o.obj_type != ObjType::PCIDevice {
        // The box around several memory children.
        return &[10];
    }
    match o.obj_type {
        ObjType::Machine => &[2],
        ObjType::Group => {
            let mut p = o.parent();
            while let Some(id) = p {
                if topo.obj(id).obj_type == ObjType::Package {
                    return &[5];
                }
                p = topo.obj(id).parent();
            }
            &[3]
        }
        ObjType::Package => &[4],
        ObjType::Die => &[6],
        ObjType::Core => &[7],
        ObjType::PU => &[8, 16, 17],
        ObjType::NUMANode => &[9, 16, 17],
        ObjType::PCIDevice => &[12],
        ObjType::OSDevice => &[13],
        ObjType::Bridge => &[14],
        ObjType::Misc => &[15, 18],
        t if t.is_cache() || t == ObjType::MemCache => &[11],
        _ => &[],
    }
}

/// A text as a FIG string: a backslash and characters outside printable
/// ASCII are written as octal escapes, so that no text ends the string or
/// the line early.
fn fig_string(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for b in text.bytes() {
        if b == b'\\' {
            s.push_str("\\\\");
        } else if (0x20..0x7f).contains(&b) {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\{b:03o}");
        }
    }
    s
}

/// Renders a scene laid out with [`crate::Backend::Fig`] as lstopo's FIG
/// document, the colours of `palette` declared first as lstopo does.
pub fn render(topo: &Topology, scene: &Scene, palette: &Palette) -> String {
    let mut out = String::from(
        "#FIG 3.2  Produced by hwloc's lstopo\nLandscape\nCenter\nInches\nletter\n100.00\nSingle\n-2\n1200 2\n",
    );
    let mut colors = Colors {
        declared: Vec::new(),
        next: 32,
    };
    for c in palette.in_declaration_order() {
        colors.declare(&mut out, c);
    }
    // Colours from lstopoStyle infos come after the palette's.
    for it in &scene.items {
        let c = match it {
            Item::Box { fill, .. } => *fill,
            Item::Text { color, .. } => *color,
            Item::Line { .. } => continue,
        };
        if colors.number(c, &[]).is_none() {
            colors.declare(&mut out, c);
        }
    }
    let thickness = scene.thickness;
    for it in &scene.items {
        match it {
            Item::Box {
                depth,
                obj,
                id,
                x,
                y,
                width,
                height,
                fill,
                cpukind_style,
            } => {
                if *width == 0 || *height == 0 {
                    continue;
                }
                let (mut linestyle, mut dashspace, mut th) = (0, 0u32, thickness);
                if *cpukind_style != 0 {
                    linestyle = 1;
                    dashspace = 1u32.wrapping_shl(*cpukind_style);
                    th = th.wrapping_mul(1 + cpukind_style);
                }
                let color = colors
                    .number(*fill, box_roles(topo, *obj, *id))
                    .unwrap_or(0);
                let f = |v: u32| v.wrapping_mul(FACTOR);
                let (x0, y0) = (f(*x), f(*y));
                let (x1, y1) = (x0.wrapping_add(f(*width)), y0.wrapping_add(f(*height)));
                let _ = writeln!(
                    out,
                    "2 2 {linestyle} {th} 0 {color} {depth} -1 20 {dashspace}.0 0 0 -1 0 0 5\n\t {x0} {y0} {x1} {y0} {x1} {y1} {x0} {y1} {x0} {y0}"
                );
            }
            Item::Line {
                depth,
                x1,
                y1,
                x2,
                y2,
                ..
            } => {
                let f = |v: u32| v.wrapping_mul(FACTOR);
                let _ = writeln!(
                    out,
                    "2 1 0 {thickness} 0 0 {depth} -1 -1 0.0 0 0 -1 0 0 2\n\t {} {} {} {}",
                    f(*x1),
                    f(*y1),
                    f(*x2),
                    f(*y2)
                );
            }
            Item::Text {
                depth,
                x,
                y,
                text,
                color,
                cpukind_style,
                ..
            } => {
                let fontflags = if cpukind_style % 2 == 1 { 2 } else { 0 };
                let size = scene.fontsize;
                // The origin moves away from the box corner, as lstopo's.
                let x = x
                    .wrapping_mul(FACTOR)
                    .wrapping_add(size.wrapping_mul(FACTOR * 2) / 10);
                let y = y
                    .wrapping_mul(FACTOR)
                    .wrapping_add(size.wrapping_mul(FACTOR * 4) / 10);
                let size = size.wrapping_mul(11) / 10;
                let len = text.len() as u32;
                let _ = writeln!(
                    out,
                    "4 0 {} {depth} -1 {fontflags} {size} 0.0 4 {} {} {x} {} {}\\001",
                    colors.number(*color, &[1, 0]).unwrap_or(0),
                    size.wrapping_mul(FACTOR),
                    (len.wrapping_mul(size) / 2).wrapping_mul(FACTOR),
                    y.wrapping_add(size.wrapping_mul(10)),
                    fig_string(text)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backend, DrawOptions, layout};

    #[test]
    fn documents_declare_colours_and_scale_items_as_lstopo() {
        let topo = wloc_core::synthetic::parse("pack:1 core:2 pu:1")
            .unwrap()
            .build(wloc_core::Topology::new())
            .unwrap();
        let o = DrawOptions::default();
        let scene = layout(&topo, &o, Backend::Fig);
        let doc = render(&topo, &scene, &o.palette);
        let lines: Vec<&str> = doc.lines().collect();
        assert_eq!(lines[0], "#FIG 3.2  Produced by hwloc's lstopo");
        assert_eq!(lines[8], "1200 2");
        // White and black are Xfig's own (7 and 0): the 11 other palette
        // entries are 32 to 42, the package's first.
        assert_eq!(lines[9], "0 32 #d2e7a4");
        assert_eq!(lines.iter().filter(|l| l.starts_with("0 ")).count(), 11);
        // The root's (white) box is the first item, in layer 100, 20 units
        // per point.
        let Item::Box { width, height, .. } = scene.items[0] else {
            panic!("the root is drawn first");
        };
        assert!(
            lines[20].starts_with("2 2 0 1 0 7 100 -1 20 0.0 "),
            "{}",
            lines[20]
        );
        assert_eq!(
            lines[21],
            format!(
                "\t 0 0 {w} 0 {w} {h} 0 {h} 0 0",
                w = width * 20,
                h = height * 20
            )
        );
        // Texts are one level deeper than their box, their strings ended by \001.
        let text = lines.iter().find(|l| l.starts_with("4 0 ")).unwrap();
        assert!(text.starts_with("4 0 0 99 -1 0 11 0.0 4 220 "), "{text}");
        assert!(text.ends_with("Machine (1024MB total)\\001"), "{text}");
        assert_eq!(fig_string("a\\b\né"), "a\\\\b\\012\\303\\251");
    }
}
