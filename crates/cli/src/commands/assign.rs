//! `rebalance-sim assign [FILE|-]`: reads the JSON of DESIGN section 8, runs the named
//! assignor and prints the assignment as one JSON object (members in id order, partitions
//! sorted). Bad input is reported on stderr with the file and key, and exits 2.

use super::Outcome;
use assignors::request::{parse_request, render_assignment};
use sim_core::RngStreams;
use std::io::Read;
use std::path::PathBuf;

/// Arguments of `assign`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The group as JSON (its format: docs/files.md); `-` or nothing reads standard input.
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,
}

/// Runs `assign`.
pub fn run(args: Args) -> Outcome {
    let (label, text) = match read_input(args.input.as_ref()) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    };
    let request = match parse_request(&text) {
        Ok(request) => request,
        Err(e) => {
            eprintln!("error: {label}: {e}");
            return Outcome::BadInput;
        }
    };
    for skipped in &request.skipped {
        eprintln!("warning: {label}: {skipped}");
    }
    let mut rng = RngStreams::new(request.seed).stream("assignor");
    let assignment = assignors::assign(request.assignor, &request.input, &mut rng);
    println!("{}", render_assignment(&request.input, &assignment));
    if let Some(line) = moved_line(&request.input, &assignment) {
        eprintln!("{label}: {line}");
    }
    Outcome::Ok
}

/// With owned partitions in the input: how many assigned partitions changed owner against
/// them (Kafka's `partitions_moved` sense: an owned partition now assigned to another
/// member), and how many owned ones are now unassigned (revoked, e.g. cooperative's first
/// round). `None` when no member reports owned partitions.
fn moved_line(
    input: &assignors::GroupInput,
    assignment: &assignors::GroupAssignment,
) -> Option<String> {
    let mut owner = std::collections::BTreeMap::new();
    for (i, m) in input.members.iter().enumerate() {
        for tp in &m.owned {
            owner.insert(*tp, i);
        }
    }
    if owner.is_empty() {
        return None;
    }
    let mut moved = 0;
    let mut kept = 0;
    for (i, partitions) in assignment.partitions.iter().enumerate() {
        for tp in partitions {
            match owner.remove(tp) {
                Some(o) if o == i => kept += 1,
                Some(_) => moved += 1,
                None => {}
            }
        }
    }
    let unassigned = owner.len();
    Some(format!(
        "{moved} partitions moved against `owned` ({kept} kept by their owner, {unassigned} \
         owned ones left unassigned)"
    ))
}

/// The input text and a label for messages (the path, or `<stdin>`).
fn read_input(path: Option<&PathBuf>) -> Result<(String, String), String> {
    match path {
        Some(p) if p.as_os_str() != "-" => {
            let label = p.display().to_string();
            let bytes = scenario::limits::read_capped(p).map_err(|e| {
                match e.strip_prefix("cannot read the file: ") {
                    Some(reason) => format!("cannot read {label}: {reason}"),
                    None => format!("{label}: {e}"),
                }
            })?;
            let text = String::from_utf8(bytes)
                .map_err(|e| format!("{label}: cannot read the file: not UTF-8 text ({e})"))?;
            Ok((label, text))
        }
        _ => {
            let max = scenario::limits::MAX_INPUT_BYTES;
            let mut text = String::new();
            std::io::stdin()
                .take(max + 1)
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            if text.len() as u64 > max {
                return Err(format!(
                    "<stdin>: larger than {max} bytes, the most an input may hold"
                ));
            }
            Ok(("<stdin>".to_string(), text))
        }
    }
}
