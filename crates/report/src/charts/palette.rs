//! Colours. Members get blues, greens, purples, cyans and magentas; down causes get reds,
//! oranges, yellow, black and grey, so "down" never looks like an owner. Protocol runs (lines
//! and bars) use the Tableau-10 order. Everything is a pure function of an index: the same
//! input, the same colour.
//!
//! The member palette is a fixed table of [`MEMBER_COLORS`] colours, so a group of up to 40
//! members has a colour per member. It was chosen once (and is pinned by the tests below) in
//! CIELAB with the CIE94 colour difference ΔE94:
//!
//! - candidates: sRGB colours with lightness 30..72 (an idle owner is drawn lightened towards
//!   white), chroma at least 25 (not grey), hue 100..345 degrees (no red, orange or yellow),
//!   and at least 22 ΔE94 from every down colour, grey, white and the rebalance mark;
//! - selection: greedy farthest point from the first four colours of the old palette: every
//!   pair of the 40 is at least 10 ΔE94 apart;
//! - order: members next to each other in the chart's member order usually own neighbouring
//!   partitions (range and round-robin assignors), so the order was searched for large
//!   differences between neighbours: members `i` and `i + 1`, and `i` and `i + 2`, are at least
//!   30 ΔE94 apart (as are the last and the first, where the table repeats).
//!
//! Groups larger than 40 reuse the table (`index % 40`); the timeline legend then says which
//! members share a colour.

use crate::charts::data::{Category, DownCause};
use plotters::style::RGBColor;

/// How many distinct member colours there are.
pub(crate) const MEMBER_COLORS: usize = 40;

/// Owner colours (consuming), in member order.
const MEMBER_BASE: [RGBColor; MEMBER_COLORS] = [
    RGBColor(31, 119, 180),  // L 48 C 39 h 265
    RGBColor(68, 102, 68),   // L 40 C 25 h 142
    RGBColor(170, 0, 255),   // L 47 C 121 h 316
    RGBColor(136, 170, 255), // L 70 C 47 h 283
    RGBColor(136, 187, 136), // L 71 C 34 h 143
    RGBColor(170, 17, 153),  // L 40 C 77 h 333
    RGBColor(0, 102, 34),    // L 37 C 51 h 143
    RGBColor(187, 153, 204), // L 68 C 31 h 316
    RGBColor(119, 51, 153),  // L 35 C 64 h 317
    RGBColor(0, 204, 68),    // L 72 C 88 h 142
    RGBColor(204, 136, 255), // L 68 C 68 h 314
    RGBColor(119, 119, 68),  // L 49 C 29 h 106
    RGBColor(17, 0, 238),    // L 30 C 127 h 306
    RGBColor(136, 136, 187), // L 58 C 29 h 293
    RGBColor(44, 160, 44),   // L 58 C 73 h 138
    RGBColor(136, 17, 102),  // L 31 C 57 h 341
    RGBColor(136, 119, 255), // L 58 C 77 h 301
    RGBColor(0, 119, 102),   // L 44 C 33 h 178
    RGBColor(136, 136, 0),   // L 55 C 61 h 103
    RGBColor(102, 102, 153), // L 45 C 30 h 294
    RGBColor(51, 170, 136),  // L 63 C 42 h 169
    RGBColor(85, 85, 34),    // L 35 C 30 h 105
    RGBColor(148, 103, 189), // L 51 C 52 h 312
    RGBColor(136, 187, 51),  // L 70 C 70 h 122
    RGBColor(51, 136, 153),  // L 53 C 26 h 220
    RGBColor(187, 119, 170), // L 59 C 38 h 335
    RGBColor(170, 170, 119), // L 68 C 28 h 107
    RGBColor(23, 190, 207),  // L 71 C 38 h 211
    RGBColor(255, 17, 255),  // L 61 C 114 h 328
    RGBColor(102, 136, 85),  // L 53 C 32 h 133
    RGBColor(51, 68, 136),   // L 31 C 43 h 291
    RGBColor(255, 119, 204), // L 69 C 64 h 342
    RGBColor(0, 136, 85),    // L 50 C 48 h 157
    RGBColor(17, 85, 238),   // L 42 C 91 h 296
    RGBColor(68, 170, 221),  // L 66 C 37 h 249
    RGBColor(68, 119, 0),    // L 45 C 60 h 125
    RGBColor(136, 85, 119),  // L 43 C 29 h 338
    RGBColor(119, 187, 170), // L 71 C 25 h 176
    RGBColor(0, 136, 255),   // L 57 C 69 h 282
    RGBColor(221, 0, 170),   // L 50 C 87 h 340
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

/// The colour of member number `index` (in the chart's member order); repeats every
/// [`MEMBER_COLORS`] members.
pub(crate) fn member(index: usize) -> RGBColor {
    MEMBER_BASE[index % MEMBER_COLORS]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// CIELAB (D65) of an sRGB colour.
    fn lab(RGBColor(r, g, b): RGBColor) -> (f64, f64, f64) {
        let lin = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (lin(r), lin(g), lin(b));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        let (fx, fy, fz) = (f(x), f(y), f(z));
        (116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz))
    }

    /// The CIE94 colour difference (graphic arts weights, symmetric in its chroma weight).
    fn delta_e94(p: RGBColor, q: RGBColor) -> f64 {
        let ((l1, a1, b1), (l2, a2, b2)) = (lab(p), lab(q));
        let (c1, c2) = (a1.hypot(b1), a2.hypot(b2));
        let dc = c1 - c2;
        let dh2 = ((a1 - a2).powi(2) + (b1 - b2).powi(2) - dc * dc).max(0.0);
        let cm = (c1 * c2).sqrt();
        ((l1 - l2).powi(2) + (dc / (1.0 + 0.045 * cm)).powi(2) + dh2 / (1.0 + 0.015 * cm).powi(2))
            .sqrt()
    }

    const DOWN_CAUSES: [DownCause; 7] = [
        DownCause::StopTheWorld,
        DownCause::Unassigned,
        DownCause::Revoked,
        DownCause::OwnerDead,
        DownCause::OwnerPaused,
        DownCause::OwnerDisconnected,
        DownCause::Other,
    ];

    #[test]
    fn forty_members_have_pairwise_distinct_colours() {
        for i in 0..MEMBER_COLORS {
            for j in i + 1..MEMBER_COLORS {
                let d = delta_e94(member(i), member(j));
                assert!(d >= 10.0, "members {i} and {j}: ΔE94 {d:.1} < 10");
            }
        }
    }

    #[test]
    fn neighbouring_members_differ_strongly() {
        // Members i, i + 1 and i + 2 (cyclically) own neighbouring partitions under range and
        // round-robin assignment.
        for i in 0..MEMBER_COLORS {
            // Step 2 is not checked across the wrap (38 and 0, 39 and 1).
            for step in [1, 2].into_iter().filter(|s| *s == 1 || i + s < MEMBER_COLORS) {
                let d = delta_e94(member(i), member(i + step));
                assert!(d >= 30.0, "members {i} and {}: ΔE94 {d:.1} < 30", i + step);
            }
        }
    }

    #[test]
    fn member_colours_never_look_down_grey_or_idle() {
        let others = DOWN_CAUSES.iter().map(|c| down(*c)).chain([UNOWNED, REBALANCE, FRAME]);
        let others: Vec<RGBColor> = others.chain([RGBColor(255, 255, 255)]).collect();
        for i in 0..MEMBER_COLORS {
            for o in &others {
                let d = delta_e94(member(i), *o);
                assert!(d >= 20.0, "member {i} vs {o:?}: ΔE94 {d:.1}");
            }
            // An idle owner (lightened) stays clearly lighter than the same owner consuming.
            let (l_idle, l_busy) = (lab(lighten(member(i), 0.55)).0, lab(member(i)).0);
            assert!(l_idle - l_busy >= 10.0, "member {i}: idle {l_idle:.1}, busy {l_busy:.1}");
        }
        assert_eq!(member(MEMBER_COLORS), member(0), "the table repeats");
    }

    #[test]
    fn heat_runs_from_white_to_dark_red() {
        assert_eq!(heat(0.0), RGBColor(255, 255, 255));
        assert_eq!(heat(1.0), RGBColor(165, 0, 0));
        // Halfway: 255 + (165 - 255) / 2 = 210, 255 / 2 = 127.5 -> 128.
        assert_eq!(heat(0.5), RGBColor(210, 128, 128));
    }
}
