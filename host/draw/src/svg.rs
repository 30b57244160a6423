//! lstopo's native SVG writer (`lstopo-svg.c`), with a valid `viewBox`
//! and escaped text.

use std::fmt::Write;

use wloc_core::Topology;

use crate::{Item, Scene};

use wloc_xml::escape_text;

/// The `id` and `class` attributes of an item: `Core_3_rect_1`,
/// `anon_text_2`...
fn id_class(topo: &Topology, obj: Option<usize>, what: &str, n: u32) -> (String, String) {
    let complement = if n != 0 {
        format!("_{n}")
    } else {
        String::new()
    };
    match obj {
        Some(id) => {
            let o = topo.obj(id);
            let ty = escape_text(&crate::type_name(o, false));
            (
                format!(" id='{ty}_{}_{what}{complement}'", o.logical_index()),
                format!(" class='{ty}'"),
            )
        }
        None => (format!(" id='anon_{what}{complement}'"), String::new()),
    }
}

/// Renders a scene laid out with [`crate::Backend::Svg`] as lstopo's
/// native SVG document.
pub fn render(topo: &Topology, scene: &Scene) -> String {
    let mut out = String::new();
    let (w, h) = (scene.width, scene.height);
    out.push_str("<?xml version='1.0' encoding='UTF-8'?>\n");
    let _ = writeln!(
        out,
        "<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' width='{w}px' height='{h}px' viewBox='0 0 {w} {h}' version='1.1'>"
    );
    for it in &scene.items {
        write_item(&mut out, topo, scene, it);
    }
    out.push_str("</svg>\n");
    out
}

/// Writes one item as lstopo does.
pub(crate) fn write_item(out: &mut String, topo: &Topology, scene: &Scene, it: &Item) {
    match it {
        Item::Box {
            obj,
            id,
            x,
            y,
            width,
            height,
            fill,
            cpukind_style,
            ..
        } => {
            let (idattr, class) = id_class(topo, *obj, "rect", *id);
            let mut thickness = scene.thickness;
            let mut dash = String::new();
            if *cpukind_style != 0 {
                let _ = write!(
                    dash,
                    " stroke-dasharray=\"{}\"",
                    1u64 << cpukind_style.min(&63)
                );
                thickness = thickness.wrapping_mul(*cpukind_style);
            }
            let _ = writeln!(
                out,
                "\t<rect{idattr}{class} x='{x}' y='{y}' width='{width}' height='{height}' fill='rgb({},{},{})' stroke='rgb(0,0,0)' stroke-width='{thickness}'{dash}/>",
                fill.r, fill.g, fill.b
            );
        }
        Item::Line {
            obj,
            id,
            x1,
            y1,
            x2,
            y2,
            ..
        } => {
            let (idattr, class) = id_class(topo, *obj, "line", *id);
            let _ = writeln!(
                out,
                "\t<line{idattr}{class} x1='{x1}' y1='{y1}' x2='{x2}' y2='{y2}' stroke='rgb(0,0,0)' stroke-width='{}'/>",
                scene.thickness
            );
        }
        Item::Text {
            obj,
            id,
            x,
            y,
            text,
            color,
            cpukind_style,
            ..
        } => {
            let (idattr, class) = id_class(topo, *obj, "text", *id);
            let bold = if cpukind_style % 2 == 1 {
                " font-weight='bold'"
            } else {
                ""
            };
            let size = scene.fontsize;
            let _ = writeln!(
                out,
                "\t<text{idattr}{class} font-family='Monospace'{bold} x='{x}' y='{}' fill='rgb({},{},{})' font-size='{size}px'>{}</text>",
                y.wrapping_add(size),
                color.r,
                color.g,
                color.b,
                escape_text(text)
            );
        }
    }
}
