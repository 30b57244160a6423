//! lstopo's LaTeX TikZ writer (`lstopo-tikz.c`): a standalone LaTeX
//! document whose `tikzpicture` draws the boxes, lines and texts.

use std::fmt::Write;

use crate::{Color, Item, Palette, Scene};

/// The font family of the labels, as `LSTOPO_TIKZ_FONTFAMILY` chooses it:
/// empty (LaTeX's default), `sf`, `rm` or `tt` (any case).  `None` for
/// another value.
pub fn font_family(env: Option<&str>) -> Option<&'static str> {
    match env.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") => Some(""),
        Some("sf") => Some("\\sffamily"),
        Some("rm") => Some("\\rmfamily"),
        Some("tt") => Some("\\ttfamily"),
        Some(_) => None,
    }
}

fn color_name(c: Color) -> String {
    format!("hwloc-color-{}-{}-{}", c.r, c.g, c.b)
}

/// A label as TikZ node text: `{}%&#` escaped as lstopo escapes them, and
/// the other characters special to LaTeX too (lstopo leaves them, which
/// breaks the document for names such as `mlx5_0`).
fn latex_text(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '{' | '}' | '%' | '&' | '#' | '_' | '$' => {
                s.push('\\');
                s.push(c);
            }
            '\\' => s.push_str("\\textbackslash{}"),
            '^' => s.push_str("\\^{}"),
            '~' => s.push_str("\\~{}"),
            _ => s.push(c),
        }
    }
    s
}

/// Renders a scene laid out with [`crate::Backend::Tikz`] as lstopo's
/// TikZ document: the colours of `palette` are defined first, as lstopo
/// does, and the labels use the font `family` (see [`font_family`]).
pub fn render(scene: &Scene, palette: &Palette, family: &str) -> String {
    let mut out = String::from("\\documentclass{standalone}\n");
    out.push_str("\n%%%%% If inserting in another document, the following lines below must be copied before \\begin{document} %%%%%\n\n");
    out.push_str("\\usepackage{tikz}\n\\usepackage{xcolor}\n");
    let mut declared: Vec<Color> = Vec::new();
    let define = |out: &mut String, c: Color| {
        let _ = writeln!(
            out,
            "\\definecolor{{{}}}{{RGB}}{{{},{},{}}}",
            color_name(c),
            c.r,
            c.g,
            c.b
        );
    };
    for c in palette.in_declaration_order() {
        define(&mut out, c);
        declared.push(c);
    }
    // Colours from lstopoStyle infos come after the palette's, once each.
    for it in &scene.items {
        let c = match it {
            Item::Box { fill, .. } => *fill,
            Item::Text { color, .. } => *color,
            Item::Line { .. } => continue,
        };
        if !declared.contains(&c) {
            define(&mut out, c);
            declared.push(c);
        }
    }
    out.push_str("\n%%%%% End of lines needed before \\begin{document}  %%%%%\n\n");
    out.push_str("\\begin{document}\n");
    out.push_str("\n%%%%% If inserting in another document, this is the actual source code of the picture %%%%%\n\n");
    let (fs, ls) = (scene.fontsize, scene.linespacing);
    let skip = fs.wrapping_add(ls);
    let _ = writeln!(
        out,
        "\\begin{{tikzpicture}}[x=1pt,y=1pt,yscale=-1,hwloc-label/.style={{fill=none,draw=none,text=black,align=left,anchor=north west,outer sep=0pt,inner sep=0pt,font=\\fontsize{{{fs}}}{{{skip}}}\\selectfont{family}}},hwloc-label-bold/.style={{hwloc-label,font=\\fontsize{{{fs}}}{{{skip}}}\\selectfont{family}\\bfseries}}]"
    );
    let _ = writeln!(
        out,
        "\t\\clip (0,0) rectangle ({},{});",
        scene.width, scene.height
    );
    for it in &scene.items {
        match it {
            Item::Box {
                x,
                y,
                width,
                height,
                fill,
                cpukind_style,
                ..
            } => {
                let mut thickness = scene.thickness;
                let mut linestyle = String::from("solid");
                if *cpukind_style != 0 {
                    thickness = thickness.wrapping_mul(*cpukind_style);
                    let dash = 1.15f32 * 1u32.wrapping_shl(*cpukind_style) as f32;
                    linestyle = format!("dash pattern=on {dash:.4}pt off {dash:.4}pt");
                }
                let _ = writeln!(
                    out,
                    "\t\\filldraw [fill={},draw=black,line width={thickness}pt,{linestyle}] ({x},{y}) rectangle ++({width},{height});",
                    color_name(*fill)
                );
            }
            Item::Line { x1, y1, x2, y2, .. } => {
                let _ = writeln!(
                    out,
                    "\t\\draw [draw=black,line width={}pt] ({x1},{y1}) -- ({x2},{y2});",
                    scene.thickness
                );
            }
            Item::Text {
                x,
                y,
                text,
                color,
                cpukind_style,
                ..
            } => {
                let bold = if cpukind_style % 2 == 1 { "-bold" } else { "" };
                let _ = writeln!(
                    out,
                    "\t\\node [hwloc-label{bold},text={}] at ({x},{y}) {{{}}};",
                    color_name(*color),
                    latex_text(text)
                );
            }
        }
    }
    out.push_str("\\end{tikzpicture}\n");
    out.push_str(
        "\n%%%%% End of actual source code of the picture to insert in another document %%%%%\n\n",
    );
    out.push_str("\\end{document}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backend, DrawOptions, layout};

    #[test]
    fn documents_define_colours_and_draw_items_as_lstopo() {
        let topo = wloc_core::synthetic::parse("pack:1 core:2 pu:1")
            .unwrap()
            .build(wloc_core::Topology::new())
            .unwrap();
        let o = DrawOptions::default();
        let scene = layout(&topo, &o, Backend::Tikz);
        let doc = render(&scene, &o.palette, "");
        let lines: Vec<&str> = doc.lines().collect();
        assert_eq!(lines[0], "\\documentclass{standalone}");
        // Every palette entry is defined, duplicates included.
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("\\definecolor{"))
                .count(),
            19
        );
        assert!(lines.contains(&"\\definecolor{hwloc-color-210-231-164}{RGB}{210,231,164}"));
        assert!(
            lines.contains(
                &format!(
                    "\t\\clip (0,0) rectangle ({},{});",
                    scene.width, scene.height
                )
                .as_str()
            )
        );
        assert!(lines.iter().any(|l| l.starts_with(
            "\t\\filldraw [fill=hwloc-color-255-255-255,draw=black,line width=1pt,solid] (0,0) rectangle ++("
        )));
        assert!(lines.iter().any(|l| {
            l.starts_with("\t\\node [hwloc-label,text=hwloc-color-0-0-0] at (")
                && l.ends_with("{Machine (1024MB total)};")
        }));
        assert_eq!(lines.last(), Some(&"\\end{document}"));
        assert_eq!(latex_text("a_b{c}%&#$"), "a\\_b\\{c\\}\\%\\&\\#\\$");
        assert_eq!(font_family(Some("TT")), Some("\\ttfamily"));
        assert_eq!(font_family(Some("bold")), None);
    }
}
