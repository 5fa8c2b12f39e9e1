//! Turns one chart description into PNG bytes and SVG text. A chart draws itself on any
//! plotters backend ([`Chart::draw`]); this module runs it once on an in-memory RGB bitmap,
//! encodes that with the `png` crate (fixed settings, so the same picture gives the same bytes),
//! and once on an in-memory SVG string.

use plotters::coord::Shift;
use plotters::drawing::{DrawingAreaErrorKind, IntoDrawingArea};
use plotters::prelude::{BitMapBackend, DrawingArea, DrawingBackend, SVGBackend};
use std::io;

/// A drawing failure inside plotters (for example a backend error), as text.
#[derive(Debug)]
pub(crate) struct ChartError(pub(crate) String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError(e.to_string())
    }
}

/// The result of drawing a chart.
pub(crate) type DrawResult = Result<(), ChartError>;

/// One chart: its size in pixels and how to draw it on a backend.
pub(crate) trait Chart {
    /// Width and height in pixels.
    fn size_px(&self) -> (u32, u32);
    /// Draws the whole chart on `root` (already filled white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// Renders `chart` to PNG bytes.
pub(crate) fn to_png(chart: &impl Chart) -> io::Result<Vec<u8>> {
    crate::charts::font::ensure_registered();
    let (width_px, height_px) = chart.size_px();
    let mut rgb = vec![255u8; width_px as usize * height_px as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width_px, height_px)).into_drawing_area();
        draw_on(chart, &root)?;
    }
    encode_png(&rgb, width_px, height_px)
}

/// Renders `chart` to an SVG document.
pub(crate) fn to_svg(chart: &impl Chart) -> io::Result<String> {
    crate::charts::font::ensure_registered();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size_px()).into_drawing_area();
        draw_on(chart, &root)?;
    }
    Ok(svg)
}

fn draw_on<DB: DrawingBackend>(
    chart: &impl Chart,
    root: &DrawingArea<DB, Shift>,
) -> io::Result<()> {
    let filled: DrawResult = root.fill(&plotters::style::WHITE).map_err(ChartError::from);
    filled
        .and_then(|()| chart.draw(root))
        .and_then(|()| root.present().map_err(ChartError::from))
        .map_err(|e| io::Error::other(format!("drawing a chart failed: {}", e.0)))
}

/// Encodes 8-bit RGB pixels as a PNG with fixed settings.
pub(crate) fn encode_png(rgb: &[u8], width_px: u32, height_px: u32) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width_px, height_px);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(io::Error::other)?;
        writer.write_image_data(rgb).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)?;
    }
    Ok(out)
}
