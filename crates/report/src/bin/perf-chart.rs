//! Draws the scaling chart of `scripts/perf-scaling.sh`: reads the sweep CSV and writes an SVG
//! and a PNG beside it. Usage: `perf-chart <scaling.csv> <out-stem>` (writes `<out-stem>.svg`
//! and `<out-stem>.png`). Exit 2 with a message on a bad file.

use report::charts::scaling::{parse_rows, scaling_png, scaling_svg};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [csv_path, stem] = args.as_slice() else {
        eprintln!("usage: perf-chart <scaling.csv> <out-stem>");
        return ExitCode::from(2);
    };
    match draw(csv_path, stem) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {csv_path}: {e}");
            ExitCode::from(2)
        }
    }
}

fn draw(csv_path: &str, stem: &str) -> std::io::Result<()> {
    let rows = parse_rows(&std::fs::read_to_string(csv_path)?)?;
    std::fs::write(format!("{stem}.svg"), scaling_svg(&rows)?)?;
    std::fs::write(format!("{stem}.png"), scaling_png(&rows)?)?;
    println!("wrote {stem}.svg and {stem}.png");
    Ok(())
}
