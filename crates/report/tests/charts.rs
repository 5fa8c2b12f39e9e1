//! End-to-end tests of `report::charts::draw_run` on synthetic reports: the files exist, are
//! valid PNG (signature, decoded by the `png` crate) and valid SVG (parsed by roxmltree), text
//! is drawn with the embedded font, edge cases render, and the output is byte-for-byte
//! deterministic. Set `REPORT_CHARTS_KEEP=DIR` to keep the charts of the showcase test in DIR.

use metrics::{OwnershipLog, OwnershipRow, RebalanceRow, RunReport, SummaryRow, TimelineRow};
use report::charts::{draw_run, timeline_png};
use std::path::{Path, PathBuf};

struct Key {
    protocol: &'static str,
    assignor: &'static str,
    static_membership: bool,
}

const EAGER: Key = Key { protocol: "eager", assignor: "range", static_membership: false };
const COOP: Key =
    Key { protocol: "cooperative", assignor: "cooperative-sticky", static_membership: false };
const STATIC: Key = Key { protocol: "eager", assignor: "range", static_membership: true };

fn summary(
    k: &Key,
    partitions: u32,
    duration_s: f64,
    reprocessed: u64,
    downtime_s: f64,
    stw_s: f64,
) -> SummaryRow {
    SummaryRow {
        scenario: "synthetic".into(),
        protocol: k.protocol.into(),
        assignor: k.assignor.into(),
        static_membership: k.static_membership,
        seed: 7,
        duration_s,
        partitions,
        records_produced: 100_000,
        records_processed: 100_000 + reprocessed,
        records_reprocessed: reprocessed,
        records_lost: reprocessed / 10,
        final_lag: 0,
        downtime_partition_s: downtime_s,
        downtime_episode_ms_p50: 500.0,
        downtime_episode_ms_p99: 9000.0,
        downtime_episode_ms_max: 10_000.0,
        stop_the_world_s: stw_s,
        rebalances: 2,
        rebalance_ms_p50: 300.0,
        rebalance_ms_max: 500.0,
        partitions_moved: 4,
        e2e_latency_ms_p50: 1.0,
        e2e_latency_ms_p99: 5.0,
        e2e_latency_ms_max: 20.0,
        events: 1234,
        measure_from_s: 0.0,
        startup_downtime_partition_s: 0.0,
        startup_stop_the_world_s: 0.0,
        startup_rebalances: 0,
    }
}

fn own(k: &Key, p: u32, start_s: f64, end_s: f64, owner: &str, state: &str) -> OwnershipRow {
    OwnershipRow {
        protocol: k.protocol.into(),
        assignor: k.assignor.into(),
        static_membership: k.static_membership,
        topic: "orders".into(),
        partition: p,
        start_s,
        end_s,
        owner: owner.into(),
        state: state.into(),
    }
}

fn rebalance(k: &Key, index: u64, trigger: &str, start_s: f64, end_s: f64) -> RebalanceRow {
    RebalanceRow {
        protocol: k.protocol.into(),
        assignor: k.assignor.into(),
        static_membership: k.static_membership,
        index,
        trigger: trigger.into(),
        start_s,
        end_s,
        duration_ms: (end_s - start_s) * 1000.0,
        rounds: 1,
        members: 3,
        partitions_moved: 2,
    }
}

/// A 60 s run of `partitions` partitions over members c0..c2: a join of c3 at 10 s (eager:
/// everything stop-the-world for 0.5 s; cooperative: only moved partitions revoked), a crash of
/// c1 at 30 s (its partitions owner-dead until eviction at 40 s, then unassigned 0.3 s), idle
/// stretches on every 7th partition.
fn synthetic(k: &Key, partitions: u32) -> RunReport {
    let eager = k.protocol == "eager";
    let mut ownership = Vec::new();
    for p in 0..partitions {
        let first = format!("c{}", p % 3);
        let second = format!("c{}", p % 4);
        let state = if p % 7 == 3 { "idle" } else { "consuming" };
        ownership.push(own(k, p, 0.0, 10.0, &first, state));
        let moved = first != second;
        let (gap_state, gap_owner) = if eager { ("stop-the-world", "") } else { ("revoked", "") };
        if eager || moved {
            ownership.push(own(k, p, 10.0, 10.5, gap_owner, gap_state));
        } else {
            ownership.push(own(k, p, 10.0, 10.5, &first, "consuming"));
        }
        if second == "c1" && !k.static_membership {
            ownership.push(own(k, p, 10.5, 30.0, &second, "consuming"));
            ownership.push(own(k, p, 30.0, 40.0, &second, "owner-dead"));
            ownership.push(own(k, p, 40.0, 40.3, "", "unassigned"));
            ownership.push(own(k, p, 40.3, 60.0, "c2", "consuming"));
        } else {
            ownership.push(own(k, p, 10.5, 60.0, &second, state));
        }
    }
    let timeline = (0..=120)
        .map(|i| {
            let t_s = f64::from(i) * 0.5;
            let lag = if (30.0..40.5).contains(&t_s) { (t_s - 29.0) * 800.0 } else { 50.0 };
            let down = if (30.0..40.3).contains(&t_s) { partitions / 4 } else { 0 };
            TimelineRow {
                protocol: k.protocol.into(),
                assignor: k.assignor.into(),
                static_membership: k.static_membership,
                t_s,
                lag: lag as u64 + if eager { 200 } else { 0 },
                down_partitions: down,
                members: 3,
            }
        })
        .collect();
    let stw = if eager { 0.5 } else { 0.0 };
    RunReport {
        summary: Some(summary(
            k,
            partitions,
            60.0,
            if eager { 4200 } else { 900 },
            2.5 * f64::from(partitions),
            stw,
        )),
        partitions: Vec::new(),
        rebalances: vec![
            rebalance(k, 0, "join", 10.0, 10.5),
            rebalance(k, 1, "session-expiry", 40.0, 40.3),
        ],
        ownership: OwnershipLog::from_rows(ownership).unwrap(),
        timeline,
    }
}

fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{} has no PNG signature", path.display());
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc =
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(doc.descendants().any(|n| n.has_tag_name("text")), "{} has no text", path.display());
}

fn check_all(paths: &[PathBuf]) {
    for p in paths {
        match p.extension().and_then(|e| e.to_str()) {
            Some("png") => {
                let (w, h, _) = decode_png(p);
                assert!(w >= 800 && h >= 300, "{}: {w}x{h}", p.display());
            }
            Some("svg") => check_svg(p),
            other => panic!("unexpected file {} ({other:?})", p.display()),
        }
    }
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
}

#[test]
fn a_three_protocol_run_writes_every_chart_as_valid_png_and_svg() {
    let reports = vec![synthetic(&EAGER, 12), synthetic(&COOP, 12), synthetic(&STATIC, 12)];
    let keep = std::env::var_os("REPORT_CHARTS_KEEP").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    let paths = draw_run(&dir, &reports).unwrap();
    assert_eq!(
        names(&paths),
        [
            "timeline-eager-range.png",
            "timeline-eager-range.svg",
            "timeline-cooperative-cooperative-sticky.png",
            "timeline-cooperative-cooperative-sticky.svg",
            "timeline-eager-range-static.png",
            "timeline-eager-range-static.svg",
            "lag.png",
            "lag.svg",
            "compare.png",
            "compare.svg",
            "downtime-cdf.png",
            "downtime-cdf.svg",
        ]
    );
    check_all(&paths);
    // No temporary files are left behind: exactly the 12 charts.
    let mut listed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png") || n.ends_with(".svg") || n.starts_with(".tmp"))
        .filter(|n| n != "timeline-10000.png") // kept by another test when REPORT_CHARTS_KEEP is set
        .collect();
    listed.sort();
    assert_eq!(listed.len(), 12, "{listed:?}");
}

#[test]
fn same_input_gives_same_bytes() {
    let reports = vec![synthetic(&EAGER, 20), synthetic(&COOP, 20)];
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let pa = draw_run(a.path(), &reports).unwrap();
    let pb = draw_run(b.path(), &reports).unwrap();
    assert_eq!(names(&pa), names(&pb));
    for (x, y) in pa.iter().zip(&pb) {
        assert!(std::fs::read(x).unwrap() == std::fs::read(y).unwrap(), "{} differs", x.display());
    }
}

fn dark_pixels(rgb: &[u8], width: u32, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> usize {
    let mut n = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let i = ((y * width + x) * 3) as usize;
            if rgb[i] < 100 && rgb[i + 1] < 100 && rgb[i + 2] < 100 {
                n += 1;
            }
        }
    }
    n
}

/// The title is drawn with the embedded font: the title band of the PNG has dark text pixels,
/// and the band to the right of any title is blank (so it is text, not a filled box).
#[test]
fn title_text_is_rendered_into_the_png() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = draw_run(tmp.path(), &[synthetic(&EAGER, 4)]).unwrap();
    for p in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "png")) {
        let (w, _, rgb) = decode_png(p);
        // Title: 22 px text at (16, 10). Some hundreds of its pixels are dark; the whole band
        // is 600 x 30 = 18,000 pixels, so a box would give far more than a third.
        let title = dark_pixels(&rgb, w, (0, 8, 600, 38));
        assert!((150..6000).contains(&title), "{}: {title} dark pixels in the title", p.display());
        let blank = dark_pixels(&rgb, w, (w - 200, 0, w, 36));
        assert_eq!(blank, 0, "{}", p.display());
    }
}

/// plotters must not fall back to system fonts: its default features (font-kit, fontconfig)
/// are off, and nothing in the workspace pulls font-kit in.
#[test]
fn no_system_font_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let plotters = manifest.lines().find(|l| l.starts_with("plotters")).unwrap();
    assert!(plotters.contains("default-features = false"), "{plotters}");
    assert!(plotters.contains("\"ab_glyph\"") && !plotters.contains("\"ttf\""), "{plotters}");
    let lock = std::fs::read_to_string(root.join("../../Cargo.lock")).unwrap();
    for name in ["font-kit", "yeslogic-fontconfig-sys", "servo-fontconfig"] {
        assert!(!lock.contains(&format!("name = \"{name}\"")), "{name} is in Cargo.lock");
    }
}

/// Draws into a fresh folder and checks every file; the folder lives as long as the result.
fn draw_ok(reports: &[RunReport]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let paths = draw_run(tmp.path(), reports).unwrap();
    check_all(&paths);
    (tmp, paths)
}

#[test]
fn edge_case_no_rebalance_and_one_partition() {
    let mut r = synthetic(&COOP, 1);
    r.rebalances.clear();
    let (_dir, paths) = draw_ok(&[r]);
    assert_eq!(paths.len(), 8); // 1 timeline + lag + compare + cdf, PNG and SVG each
}

#[test]
fn edge_case_member_that_never_owns_and_protocol_without_timeline_rows() {
    // c0 owns everything; c1 is a member (summary and timeline say 2) but owns nothing.
    let mut lonely = synthetic(&EAGER, 3);
    let rows = lonely.ownership.rows().map(|mut row| {
        row.owner = if row.owner.is_empty() { String::new() } else { "c0".into() };
        row
    });
    lonely.ownership = OwnershipLog::from_rows(rows.collect::<Vec<_>>()).unwrap();
    let mut silent = synthetic(&COOP, 3);
    silent.timeline.clear();
    let (_dir, paths) = draw_ok(&[lonely, silent]);
    assert_eq!(paths.len(), 10);
    let lag_svg =
        std::fs::read_to_string(paths.iter().find(|p| p.ends_with("lag.svg")).unwrap()).unwrap();
    assert!(lag_svg.contains("cooperative:cooperative-sticky (no samples)"));
}

#[test]
fn edge_case_zero_length_run_and_empty_reports() {
    let k = &EAGER;
    let zero = RunReport {
        summary: Some(summary(k, 1, 0.0, 0, 0.0, 0.0)),
        partitions: Vec::new(),
        rebalances: Vec::new(),
        ownership: OwnershipLog::from_rows(vec![own(k, 0, 0.0, 0.0, "c0", "consuming")]).unwrap(),
        timeline: Vec::new(),
    };
    assert_eq!(draw_ok(&[zero]).1.len(), 8);
    // A report with no rows at all has no key: no timeline, the run charts still render.
    assert_eq!(
        names(&draw_ok(&[RunReport::default()]).1),
        [
            "lag.png",
            "lag.svg",
            "compare.png",
            "compare.svg",
            "downtime-cdf.png",
            "downtime-cdf.svg"
        ]
    );
    assert_eq!(draw_ok(&[]).1.len(), 6);
}

/// 10,000 partitions are drawn as 200 bands of 50: the output is bounded by the picture, not by
/// the intervals. The wall time is printed for information only (speed is measured in
/// benchmarks, never asserted in a test).
#[test]
#[allow(clippy::disallowed_methods)]
fn edge_case_ten_thousand_partitions_are_drawn_in_bands() {
    let report = synthetic(&EAGER, 10_000);
    let start = std::time::Instant::now();
    let png = timeline_png(&report).unwrap();
    let svg = report::charts::timeline_svg(&report).unwrap();
    let elapsed = start.elapsed();
    eprintln!(
        "10,000-partition timeline: PNG {} bytes, SVG {} bytes in {elapsed:?}",
        png.len(),
        svg.len()
    );
    if let Some(dir) = std::env::var_os("REPORT_CHARTS_KEEP") {
        std::fs::write(Path::new(&dir).join("timeline-10000.png"), &png).unwrap();
    }
    let decoder = png::Decoder::new(std::io::Cursor::new(png.as_slice()));
    let info = decoder.read_info().unwrap().info().clone();
    // 10,000 partitions -> bands of 50, 200 rows of 3 px (720 / 200 = 3): 600 px main panel,
    // plus head 64, track 56, strip 36, x axis 56, margin 16 = 828 px.
    assert_eq!((info.width, info.height), (1600, 828));
    assert!(svg.contains("each row: 50 partitions"));
    roxmltree::Document::parse(&svg).unwrap();
    // Bounded by the picture, not the ~45,000 intervals: well under 10 MB of SVG.
    assert!(svg.len() < 10_000_000, "{} bytes", svg.len());
}

/// A horizontal or vertical black line of an SVG chart: the axes.
#[derive(Clone, Copy, Debug)]
struct Axis {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

/// One polyline of an SVG: stroke colour, stroke width, points.
type Polyline = (String, f64, Vec<(f64, f64)>);

/// The polylines of an SVG.
fn polylines(svg: &str) -> Vec<Polyline> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            let stroke = n.attribute("stroke").unwrap_or("").to_string();
            let width: f64 = n.attribute("stroke-width").unwrap_or("1").parse().unwrap();
            let points = n
                .attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (stroke, width, points)
        })
        .collect()
}

/// The plotting rectangles of an SVG chart, (left, top, right, bottom) in pixels: a y axis (a
/// long vertical black line) with the x axis (a long horizontal black line) just below it.
fn plot_rects(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    let axes: Vec<Axis> = polylines(svg)
        .into_iter()
        .filter(|(stroke, w, p)| stroke == "#000000" && *w == 1.0 && p.len() == 2)
        .map(|(_, _, p)| Axis { x0: p[0].0, y0: p[0].1, x1: p[1].0, y1: p[1].1 })
        .collect();
    let verticals = axes.iter().filter(|a| a.x0 == a.x1 && (a.y1 - a.y0).abs() > 100.0);
    let mut rects = Vec::new();
    for v in verticals {
        let bottom = v.y0.max(v.y1);
        let x_axis = axes
            .iter()
            .find(|a| a.y0 == a.y1 && (a.y0 - bottom).abs() <= 1.0 && a.x1 - a.x0 > 300.0);
        if let Some(h) = x_axis {
            rects.push((v.x0, v.y0.min(v.y1), h.x1, h.y0));
        }
    }
    rects
}

/// Every series line (coloured, 3 points or more: not a legend sample) lies inside its plotting
/// rectangle, its stroke included: nothing on or below the x axis, nothing left of the y axis.
fn assert_lines_inside_axes(svg: &str, what: &str) {
    let rects = plot_rects(svg);
    assert!(!rects.is_empty(), "{what}: no axes found");
    let series = polylines(svg).into_iter().filter(|(s, _, p)| s != "#000000" && p.len() >= 3);
    let mut checked = 0;
    for (stroke, width, points) in series {
        let (top, bottom) =
            points.iter().fold((f64::MAX, f64::MIN), |(t, b), p| (t.min(p.1), b.max(p.1)));
        // The panel of the line: the rectangle whose x axis is the first at or below its lowest point - 1.
        let rect = rects
            .iter()
            .filter(|r| r.3 >= bottom - 1.0)
            .min_by(|a, b| a.3.total_cmp(&b.3))
            .unwrap_or_else(|| panic!("{what}: a {stroke} line below every axis"));
        let half = width / 2.0;
        // The x axis is a 1 px line centred on rect.3: the stroke must end above its top edge.
        assert!(
            bottom + half <= rect.3 - 0.5,
            "{what}: {stroke} line reaches y {} (x axis at {})",
            bottom + half,
            rect.3
        );
        assert!(
            top - half >= rect.1,
            "{what}: {stroke} line reaches above the plot: {}",
            top - half
        );
        // Left of the y axis: no point, and no vertical stretch whose stroke reaches it (SVG
        // lines end flat at their points, so only a vertical stroke widens sideways).
        for w in points.windows(2) {
            let at = w[0];
            assert!(at.0 >= rect.0 + 0.5, "{what}: {stroke} line left of the y axis at {at:?}");
            let x = at.0 - half;
            let ok = w[0].0 != w[1].0 || x >= rect.0 + 0.5;
            assert!(ok, "{what}: {stroke} vertical stroke reaches x {x}, y axis at {}", rect.0);
        }
        checked += 1;
    }
    assert!(checked > 0, "{what}: no series lines");
}

/// Reports whose down partitions jump up and back down sample by sample (the sharp turns a
/// wide line draws past its points) and sit at 0 the rest of the time.
fn spiky(k: &Key) -> RunReport {
    let mut r = synthetic(k, 12);
    for (i, t) in r.timeline.iter_mut().enumerate() {
        t.down_partitions = if (20..40).contains(&i) && i % 2 == 0 { 6 } else { 0 };
        t.lag = if (60..70).contains(&i) && i % 2 == 0 { 3000 } else { 0 };
    }
    r
}

#[test]
fn lag_and_cdf_lines_stay_inside_their_axes() {
    let reports = vec![spiky(&EAGER), spiky(&COOP), spiky(&STATIC)];
    let tmp = tempfile::tempdir().unwrap();
    let paths = draw_run(tmp.path(), &reports).unwrap();
    for stem in ["lag", "downtime-cdf"] {
        let svg = std::fs::read_to_string(tmp.path().join(format!("{stem}.svg"))).unwrap();
        assert_lines_inside_axes(&svg, stem);
        // The PNG too (it draws wide lines with mitred corners, which the SVG leaves to the
        // viewer): no coloured pixel in the 4 rows under each x axis, nor left of the y axis.
        let png = paths.iter().find(|p| p.ends_with(format!("{stem}.png"))).unwrap();
        let (w, _, rgb) = decode_png(png);
        let coloured = |x: u32, y: u32| {
            let i = ((y * w + x) * 3) as usize;
            let (r, g, b) = (rgb[i], rgb[i + 1], rgb[i + 2]);
            r.max(g).max(b) - r.min(g).min(b) > 60
        };
        for (left, _, right, axis_y) in plot_rects(&svg) {
            for y in axis_y as u32 + 1..axis_y as u32 + 5 {
                let bad = (left as u32..right as u32).filter(|x| coloured(*x, y)).count();
                assert_eq!(
                    bad, 0,
                    "{stem}.png: {bad} coloured pixels in row {y}, under the x axis"
                );
            }
        }
    }
}

/// The text elements of an SVG with their anchor position.
fn texts(svg: &str) -> Vec<(f64, f64, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            let y: f64 = n.attribute("y").unwrap().parse().unwrap();
            (x, y, n.text().unwrap_or("").trim().to_string())
        })
        .collect()
}

#[test]
fn legends_sit_outside_the_plots() {
    let reports = vec![synthetic(&EAGER, 12), synthetic(&COOP, 12), synthetic(&STATIC, 12)];
    let tmp = tempfile::tempdir().unwrap();
    draw_run(tmp.path(), &reports).unwrap();
    for stem in ["lag", "downtime-cdf"] {
        let svg = std::fs::read_to_string(tmp.path().join(format!("{stem}.svg"))).unwrap();
        let rects = plot_rects(&svg);
        let legend: Vec<(f64, f64, String)> = texts(&svg)
            .into_iter()
            .filter(|(_, _, s)| ["eager:range", "cooperative:"].iter().any(|l| s.starts_with(l)))
            .collect();
        assert_eq!(legend.len(), 3, "{stem}: legend entries {legend:?}");
        for (x, y, s) in &legend {
            // The text starts at (x, y) and is about 13 px tall and at least 60 px wide.
            for r in &rects {
                let apart = x + 60.0 < r.0 || *x > r.2 || y + 8.0 < r.1 || y - 8.0 > r.3;
                assert!(apart, "{stem}: legend '{s}' at ({x}, {y}) is inside the plot {r:?}");
            }
        }
    }
}

/// Two runs with equal data: the second is drawn inside the first, both colours show, and the
/// legend says they are the same.
#[test]
fn equal_runs_stay_visible_and_are_named() {
    const STICKY: Key = Key { protocol: "eager", assignor: "sticky", static_membership: false };
    let reports = vec![synthetic(&EAGER, 12), synthetic(&STICKY, 12)];
    let tmp = tempfile::tempdir().unwrap();
    draw_run(tmp.path(), &reports).unwrap();
    let svg = std::fs::read_to_string(tmp.path().join("lag.svg")).unwrap();
    assert!(svg.contains("eager:sticky (same as eager:range)"), "no 'same as' note");
    let cdf = std::fs::read_to_string(tmp.path().join("downtime-cdf.svg")).unwrap();
    assert!(cdf.contains("(same as eager:range)"), "no 'same as' note in the CDF");
    let (w, h, rgb) = decode_png(&tmp.path().join("lag.png"));
    let count = |c: (u8, u8, u8)| {
        (0..(w * h) as usize).filter(|i| (rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2]) == c).count()
    };
    // Tableau blue (first run) and orange (second run), exactly.
    let (blue, orange) = (count((31, 119, 180)), count((255, 127, 14)));
    assert!(blue > 2000, "first run hidden: {blue} blue pixels");
    assert!(orange > 1000, "second run hidden: {orange} orange pixels");
}

/// 40 members over 80 partitions (two each, range style): every member is in the legend by
/// name, none is summarised as "+N more".
#[test]
fn a_forty_member_timeline_names_every_member() {
    let k = &COOP;
    let rows: Vec<OwnershipRow> =
        (0..80).map(|p| own(k, p, 0.0, 60.0, &format!("c{}", p / 2), "consuming")).collect();
    let report = RunReport {
        summary: Some(summary(k, 80, 60.0, 0, 0.0, 0.0)),
        partitions: Vec::new(),
        rebalances: Vec::new(),
        ownership: OwnershipLog::from_rows(rows).unwrap(),
        timeline: Vec::new(),
    };
    let svg = report::charts::timeline_svg(&report).unwrap();
    let names: Vec<String> = texts(&svg).into_iter().map(|(_, _, s)| s).collect();
    for m in 0..40 {
        assert!(names.contains(&format!("c{m}")), "c{m} is not in the legend");
    }
    assert!(!svg.contains("more members"), "a legend cut short");
    // Neighbouring partitions (owned by members m and m + 1) have different colours: the
    // fills of the rectangles of rows 1 and 2 (partitions orders-1, c0, and orders-2, c1).
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let fills: std::collections::BTreeSet<&str> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("rect")
                && n.attribute("width").is_some_and(|w| w.parse::<f64>().unwrap() > 500.0)
        })
        .filter_map(|n| n.attribute("fill"))
        .collect();
    assert!(fills.len() >= 40, "{} distinct wide fills for 40 owners", fills.len());
}
