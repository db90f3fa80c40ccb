//! SVG → PNG rasterising, pure Rust, with an embedded font.
//!
//! Contract: [`svg_to_png`] renders any SVG that the plot functions produce to PNG bytes of the
//! SVG's own pixel size (or a multiple of it with [`svg_to_png_scaled`]). Text is set in DejaVu
//! Sans, which is compiled into the binary, so the output is the same on every machine and needs
//! no system fonts or libraries. Every `font-family` falls back to that font.

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

use super::PlotError;

/// The family name of the embedded font.
const FAMILY: &str = "DejaVu Sans";

/// The font database with the embedded font, built once.
fn fontdb() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.load_font_data(dejavu::sans::bold().to_vec());
        db.set_sans_serif_family(FAMILY);
        db.set_serif_family(FAMILY);
        db.set_monospace_family(FAMILY);
        db.set_cursive_family(FAMILY);
        db.set_fantasy_family(FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// Render an SVG document to PNG bytes at the SVG's own size (1 SVG unit = 1 pixel).
///
/// # Errors
/// [`PlotError::Png`] if the SVG does not parse, has an empty or huge size, or encoding fails.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, PlotError> {
    svg_to_png_scaled(svg, 1.0)
}

/// Render an SVG document to PNG bytes, `scale` pixels per SVG unit (e.g. 2.0 for high-DPI).
///
/// # Errors
/// [`PlotError::Png`] if `scale` is not a positive finite number, the SVG does not parse, the
/// image would be empty or larger than 16384 pixels a side, or encoding fails.
pub fn svg_to_png_scaled(svg: &str, scale: f32) -> Result<Vec<u8>, PlotError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(PlotError::Png(format!("invalid scale {scale}")));
    }
    let opt = usvg::Options {
        font_family: FAMILY.to_string(),
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| PlotError::Png(e.to_string()))?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil(),
        (size.height() * scale).ceil(),
    );
    if !(1.0..=16384.0).contains(&w) || !(1.0..=16384.0).contains(&h) {
        return Err(PlotError::Png(format!("image size {w}×{h} out of range")));
    }
    let mut pixmap = tiny_skia::Pixmap::new(w as u32, h as u32)
        .ok_or_else(|| PlotError::Png("cannot allocate the image".to_string()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| PlotError::Png(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Width and height from a PNG's IHDR chunk.
    pub(crate) fn png_size(png: &[u8]) -> (u32, u32) {
        let be = |i: usize| u32::from_be_bytes([png[i], png[i + 1], png[i + 2], png[i + 3]]);
        (be(16), be(20))
    }

    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

    #[test]
    fn renders_text_with_the_embedded_font() {
        let svg = r#"<svg width="120" height="40" xmlns="http://www.w3.org/2000/svg">
            <text x="5" y="30" font-family="sans-serif" font-size="24" fill="black">Mbit/s</text>
            </svg>"#;
        let png = svg_to_png(svg).unwrap();
        assert_eq!(png[..8], SIGNATURE);
        assert_eq!(png_size(&png), (120, 40));
        // Text was drawn: the same SVG without its text gives a different (blank) image.
        let blank = svg_to_png(&svg.replace("Mbit/s", "")).unwrap();
        assert_ne!(png, blank);
        let big = svg_to_png_scaled(svg, 2.0).unwrap();
        assert_eq!(png_size(&big), (240, 80));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(svg_to_png("not svg"), Err(PlotError::Png(_))));
        assert!(svg_to_png_scaled(r#"<svg width="1" height="1"/>"#, 0.0).is_err());
    }
}
