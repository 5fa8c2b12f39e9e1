//! The embedded font. Chart text is drawn with DejaVu Sans compiled into the binary (see
//! `font/LICENSE-DejaVu.txt`) and handed to plotters' `ab_glyph` text renderer, so a PNG has
//! the same text on every machine, including one with no fonts installed. plotters is built
//! without its `ttf` feature, so it never asks the system (font-kit, fontconfig) for a font.

use plotters::style::{FontStyle, TextStyle};
use std::sync::Once;

/// The font family name every chart asks for; only the embedded font is registered under it.
pub(crate) const FAMILY: &str = "sans-serif";

/// DejaVu Sans 2.37 (Debian fonts-dejavu-core 2.37-6), unmodified.
static DEJAVU_SANS_TTF: &[u8] = include_bytes!("font/DejaVuSans.ttf");

/// Registers the embedded font with plotters once per process. Every drawing entry point calls
/// this first; it is cheap after the first call.
pub(crate) fn ensure_registered() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS_TTF).is_ok();
        // The bytes are compiled in: a failure here is a broken build, not a user error.
        assert!(ok, "the embedded DejaVu Sans font failed to parse");
    });
}

/// A text style of the embedded font at `size_px` pixels.
pub(crate) fn text(size_px: u32) -> TextStyle<'static> {
    TextStyle::from((FAMILY, f64::from(size_px)))
}
