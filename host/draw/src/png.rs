//! PNG pictures: the SVG rasterized by resvg, with the system's fonts.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg;
use wloc_core::Topology;

use crate::Scene;

/// The system fonts, loaded once; the first monospaced face found stands
/// for the generic `monospace` family.
fn fontdb() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        let mono = db
            .faces()
            .find(|f| f.monospaced)
            .and_then(|f| f.families.first().map(|(n, _)| n.clone()));
        if let Some(m) = mono {
            db.set_monospace_family(m);
        }
        Arc::new(db)
    })
    .clone()
}

/// Rasterizes an SVG document to an RGBA pixmap of its own size on a white
/// background.
pub fn rasterize(svg: &str) -> Result<Pixmap, String> {
    let opts = usvg::Options {
        fontdb: fontdb(),
        font_family: "monospace".into(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opts).map_err(|e| format!("cannot read the SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "cannot allocate a {}x{} picture",
            size.width(),
            size.height()
        )
    })?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    Ok(pixmap)
}

/// Renders a scene laid out for SVG as a PNG file of the same size.
pub fn render(topo: &Topology, scene: &Scene) -> Result<Vec<u8>, String> {
    // lstopo names the family `Monospace`; the generic family is lowercase.
    let svg = crate::svg::render(topo, scene)
        .replace("font-family='Monospace'", "font-family='monospace'");
    let pixmap = rasterize(&svg)?;
    pixmap
        .encode_png()
        .map_err(|e| format!("cannot encode the PNG picture: {e}"))
}

/// Decodes a PNG file into its width, height and RGBA pixels (for checks
/// of written pictures).
pub fn decode(png: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    let p = Pixmap::decode_png(png).map_err(|e| format!("cannot decode the PNG picture: {e}"))?;
    let pixels = p
        .pixels()
        .iter()
        .flat_map(|c| {
            let c = c.demultiply();
            [c.red(), c.green(), c.blue(), c.alpha()]
        })
        .collect();
    Ok((p.width(), p.height(), pixels))
}
