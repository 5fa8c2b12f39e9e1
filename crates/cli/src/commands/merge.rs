//! `rebalance-sim merge DIR... [--out DIR]`: joins `sweep --shard K/N` outputs into the files
//! of one unsharded sweep (lab::sweep_merge), then prints the aggregate table.

use super::Outcome;
use lab::sweep_manifest::{Manifest, MANIFEST_JSON};
use std::path::{Path, PathBuf};

/// Arguments of `merge`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shard output folders (all N of them).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged output folder (default `results/sweeps/<name>/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also draw the sweep charts into `<out>/charts/`.
    #[arg(long)]
    pub charts: bool,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Outcome {
    let out = match args.out {
        Some(o) => o,
        None => match Manifest::read(&args.dirs[0].join(MANIFEST_JSON)) {
            Ok(m) => PathBuf::from("results/sweeps").join(m.name),
            Err(e) => return bad(&e),
        },
    };
    if let Some(shard) = shard_at(&args.dirs, &out) {
        return bad(&format!(
            "--out {}: is the shard folder {} given to merge; the merge would overwrite it: \
             choose another folder",
            out.display(),
            shard.display()
        ));
    }
    match lab::sweep_merge::merge(&args.dirs, &out) {
        Ok(m) => {
            eprintln!("merged {} shards, {} runs -> {}", m.shards, m.runs, out.display());
            match Manifest::read(&out.join(MANIFEST_JSON)) {
                Ok(manifest) => super::sweep::finish(&out, &manifest.grid_keys, args.charts),
                Err(e) => bad(&e),
            }
        }
        Err(e) => bad(&e.to_string()),
    }
}

/// The shard folder among `dirs` that is the folder `out` (the same after resolving links and
/// `..`), if any.
fn shard_at<'a>(dirs: &'a [PathBuf], out: &Path) -> Option<&'a PathBuf> {
    let out = out.canonicalize().ok()?;
    dirs.iter().find(|dir| dir.canonicalize().is_ok_and(|d| d == out))
}

fn bad(message: &str) -> Outcome {
    eprintln!("error: {message}");
    Outcome::BadInput
}
