//! Colours. Members get blues, greens, purples and browns; down causes get reds, oranges,
//! black and grey, so "down" never looks like an owner. Protocol runs (lines and bars) use the
//! Tableau-10 order. Everything is a pure function of an index: the same input, the same colour.

use crate::charts::data::{Category, DownCause};
use plotters::style::RGBColor;

/// Owner colours (consuming). Chosen to stay clear of the red/orange/black down colours.
const MEMBER_BASE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),  // blue
    RGBColor(44, 160, 44),   // green
    RGBColor(148, 103, 189), // purple
    RGBColor(23, 190, 207),  // cyan
    RGBColor(140, 86, 75),   // brown
    RGBColor(57, 59, 121),   // navy
    RGBColor(99, 121, 57),   // olive green
    RGBColor(206, 109, 189), // orchid
    RGBColor(107, 174, 214), // light blue
    RGBColor(0, 109, 91),    // teal
];

/// Run colours (Tableau 10).
const RUN_BASE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Light grey for "no owner, nothing waiting" (not down).
pub(crate) const UNOWNED: RGBColor = RGBColor(215, 215, 215);
/// The rebalance marks.
pub(crate) const REBALANCE: RGBColor = RGBColor(55, 71, 79);
/// Grid and frame lines.
pub(crate) const FRAME: RGBColor = RGBColor(90, 90, 90);

/// The colour of member number `index` (in the chart's member order).
pub(crate) fn member(index: usize) -> RGBColor {
    if let Some(c) = MEMBER_BASE.get(index) {
        return *c;
    }
    // Beyond the fixed palette: walk the hue circle by the golden angle, skipping the reds
    // (hues 340..40 degrees) that mean "down".
    let step = (index - MEMBER_BASE.len()) as f64;
    let hue_deg = 40.0 + (step * 137.507_764).rem_euclid(300.0);
    let value = if index % 2 == 1 { 0.55 } else { 0.75 };
    hsv(hue_deg, 0.65, value)
}

/// The colour of protocol run number `index`.
pub(crate) fn run(index: usize) -> RGBColor {
    RUN_BASE[index % RUN_BASE.len()]
}

/// The colour of a down cause.
pub(crate) fn down(cause: DownCause) -> RGBColor {
    match cause {
        DownCause::StopTheWorld => RGBColor(214, 39, 40),
        DownCause::Unassigned => RGBColor(20, 20, 20),
        DownCause::Revoked => RGBColor(255, 127, 14),
        DownCause::OwnerDead => RGBColor(120, 0, 0),
        DownCause::OwnerPaused => RGBColor(255, 152, 150),
        DownCause::OwnerDisconnected => RGBColor(240, 200, 0),
        DownCause::Other => RGBColor(127, 127, 127),
    }
}

/// The colour of one timeline cell.
pub(crate) fn category(cat: Category) -> RGBColor {
    match cat {
        Category::Down(cause) => down(cause),
        Category::Unowned => UNOWNED,
        Category::Owned { member: m, idle: false } => member(m),
        Category::Owned { member: m, idle: true } => lighten(member(m), 0.55),
    }
}

/// The heat colour of a down fraction in `[0, 1]`: white to red.
pub(crate) fn heat(fraction: f64) -> RGBColor {
    let f = fraction.clamp(0.0, 1.0);
    let mix = |white: u8, full: u8| {
        (f64::from(white) + (f64::from(full) - f64::from(white)) * f).round() as u8
    };
    RGBColor(mix(255, 165), mix(255, 0), mix(255, 0))
}

/// `color` mixed with white by `amount` (0 = unchanged, 1 = white).
pub(crate) fn lighten(color: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

fn hsv(hue_deg: f64, saturation: f64, value: f64) -> RGBColor {
    let c = value * saturation;
    let h = hue_deg / 60.0;
    let x = c * (1.0 - (h.rem_euclid(2.0) - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = value - c;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_member_colours_avoid_red_and_repeat_nothing_nearby() {
        // Hues are 40 + k*137.5 mod 300, always in [40, 340): never the red band.
        for i in 10..200 {
            let RGBColor(r, g, b) = member(i);
            assert!(!(r > 180 && g < 80 && b < 80), "member {i} looks red: {r},{g},{b}");
            assert_ne!(member(i), member(i + 1));
        }
    }

    #[test]
    fn heat_runs_from_white_to_dark_red() {
        assert_eq!(heat(0.0), RGBColor(255, 255, 255));
        assert_eq!(heat(1.0), RGBColor(165, 0, 0));
        // Halfway: 255 + (165 - 255) / 2 = 210, 255 / 2 = 127.5 -> 128.
        assert_eq!(heat(0.5), RGBColor(210, 128, 128));
    }
}
