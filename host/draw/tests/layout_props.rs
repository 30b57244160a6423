//! Properties of the layout over random synthetic topologies and sizes:
//! it never panics, every box lies inside the picture, and the text art
//! and the SVG of any topology are well formed.

use proptest::prelude::*;
use wloc_core::Topology;
use wloc_draw::{Backend, DrawOptions, Item, Orient};

fn synth(desc: &str) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
    wloc_core::synthetic::parse(desc).unwrap().build(t).unwrap()
}

fn description() -> impl Strategy<Value = String> {
    (
        1u32..4,
        prop::bool::ANY,
        1u32..3,
        1u32..9,
        1u32..4,
        prop::bool::ANY,
    )
        .prop_map(|(packs, numa, l3, cores, pus, group)| {
            let numa = if numa { " [numa]" } else { "" };
            let group = if group { "group:2 " } else { "" };
            format!("{group}pack:{packs}{numa} l3:{l3} core:{cores} pu:{pus}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn boxes_stay_inside_the_picture(
        desc in description(),
        grid in 0u32..12,
        font in 0u32..20,
        orient in 0usize..4,
        factorize in prop::bool::ANY,
    ) {
        let topo = synth(&desc);
        let mut o = DrawOptions { gridsize: grid, fontsize: font, ..DrawOptions::default() };
        if orient > 0 {
            o.force_all([Orient::None, Orient::Horiz, Orient::Vert, Orient::Rect][orient]);
        }
        if !factorize {
            o.no_factorize();
        }
        for backend in [Backend::Svg, Backend::Ascii, Backend::Fig, Backend::Tikz] {
            let scene = wloc_draw::layout(&topo, &o, backend);
            for it in &scene.items {
                if let Item::Box { x, y, width, height, .. } = it {
                    prop_assert!(x + width <= scene.width, "{desc}: box beyond the width");
                    prop_assert!(y + height <= scene.height, "{desc}: box beyond the height");
                }
            }
            match backend {
                Backend::Svg => {
                    let svg = wloc_draw::svg::render(&topo, &scene);
                    prop_assert!(roxmltree::Document::parse(&svg).is_ok());
                }
                Backend::Ascii => {
                    let art = wloc_draw::ascii::render(&scene, false);
                    prop_assert!(art.lines().all(|l| l.chars().count() == art.lines().next().unwrap().chars().count()));
                }
                Backend::Fig => {
                    let fig = wloc_draw::fig::render(&topo, &scene, &o.palette);
                    prop_assert!(fig.starts_with("#FIG 3.2"));
                }
                Backend::Tikz => {
                    let tex = wloc_draw::tikz::render(&scene, &o.palette, "");
                    prop_assert!(tex.ends_with("\\end{document}\n"), "{desc}: the document is not closed");
                }
            }
        }
    }
}
