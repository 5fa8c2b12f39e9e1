//! Embeds the commit the binary is built from (`REBALANCE_SIM_GIT_COMMIT`): a sweep's
//! manifest records the binary's provenance, not that of the folder it runs in (issue 27
//! item 7). Outside a git checkout (a source tarball, a vendored copy) it is `unknown`.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=REBALANCE_SIM_GIT_COMMIT={commit}");
    // Built again when HEAD moves: HEAD itself, the branch it names, packed refs.
    if let Some(git_dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", common.join("packed-refs").display());
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", common.join(branch).display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
