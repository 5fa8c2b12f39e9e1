//! A `run`'s output folder replaced as a whole: the files are written into a fresh staging
//! folder beside it, which is then exchanged with the old folder in one atomic rename
//! (`renameat2(RENAME_EXCHANGE)` on Linux), so a reader or a kill at any instant sees either
//! the old set of files or the new set, never a mix (issue 27 item 5).
//!
//! Lifecycle: [`RunFolder::stage`] sweeps up staging folders that killed runs left beside the
//! target (their process is gone), creates `.<name>.staging-<pid>-<n>` and registers it for
//! [`remove_registered`] (called from the binary's SIGINT/SIGTERM handler); the caller writes
//! into [`RunFolder::path`]; [`RunFolder::commit`] carries over the entries of the old folder
//! that this run does not write (other files, a previous run's charts), exchanges the two
//! folders and removes the old one. Dropped without a commit, the staging folder is removed.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Staging folders of this process not yet committed (removed on SIGINT/SIGTERM).
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Distinguishes two staging folders of one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A staging folder that becomes `target` on [`RunFolder::commit`].
#[derive(Debug)]
pub struct RunFolder {
    target: PathBuf,
    staging: PathBuf,
    committed: bool,
}

/// `.<name>.staging-` for the folder `target`: the prefix of its staging folders.
fn staging_prefix(target: &Path) -> String {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!(".{name}.staging-")
}

fn parent_of(target: &Path) -> &Path {
    target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

impl RunFolder {
    /// Creates a fresh staging folder beside `target` (creating `target`'s parent), after
    /// removing the staging folders of processes that no longer run.
    pub fn stage(target: &Path) -> io::Result<RunFolder> {
        if target.file_name().is_none() {
            return Err(io::Error::other("the output folder needs a name (not `.` or `/`)"));
        }
        if target.exists() && !target.is_dir() {
            return Err(io::Error::other("exists and is not a folder"));
        }
        let parent = parent_of(target);
        std::fs::create_dir_all(parent)?;
        sweep_stale(parent, &staging_prefix(target));
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}{}-{n}", staging_prefix(target), std::process::id());
        let staging = parent.join(name);
        std::fs::create_dir(&staging)?;
        STAGING.lock().unwrap_or_else(|e| e.into_inner()).push(staging.clone());
        Ok(RunFolder { target: target.to_path_buf(), staging, committed: false })
    }

    /// The folder to write this run's files into.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Puts the staging folder in place of the target in one rename, keeping the old folder's
    /// entries this run did not write, and removes the old folder.
    pub fn commit(mut self) -> io::Result<()> {
        if self.target.is_dir() {
            carry_over(&self.target, &self.staging)?;
            sync_dir(&self.staging)?;
            exchange(&self.staging, &self.target)?;
            // The staging path now holds the old set.
            std::fs::remove_dir_all(&self.staging)?;
        } else {
            sync_dir(&self.staging)?;
            std::fs::rename(&self.staging, &self.target)?;
        }
        self.committed = true;
        unregister(&self.staging);
        sync_dir(parent_of(&self.target))
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
            unregister(&self.staging);
        }
    }
}

fn unregister(staging: &Path) {
    STAGING.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != staging);
}

/// Removes every staging folder not yet committed (the binary's signal handler calls this
/// before the process ends).
pub fn remove_registered() {
    let list = std::mem::take(&mut *STAGING.lock().unwrap_or_else(|e| e.into_inner()));
    for path in list {
        // The run's writer may still be adding files while this removes them (the handler
        // runs on its own thread): a removal that meets a new file fails with "not empty",
        // so it is tried again, a bounded number of times, until the folder is gone.
        for _ in 0..200 {
            if std::fs::remove_dir_all(&path).is_ok() || !path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// Removes `<prefix><pid>-<n>` folders in `parent` whose process no longer runs (a run killed
/// by SIGKILL, or a machine that stopped). Where processes cannot be seen (no `/proc`), none.
fn sweep_stale(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(prefix) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let proc_root = Path::new("/proc");
        let gone = proc_root.join("self").exists() && !proc_root.join(pid.to_string()).exists();
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Hard-links (or copies) into `staging` the entries of `old` that `staging` does not have,
/// folders recursively, leaving `old` whole. Temporary files of older versions (`.tmp*`) and
/// staging folders are not carried.
fn carry_over(old: &Path, staging: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(old)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(".tmp") {
            continue;
        }
        let to = staging.join(&name);
        if to.symlink_metadata().is_ok() {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::create_dir(&to)?;
            carry_over(&entry.path(), &to)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            symlink(&link, &to)?;
        } else if std::fs::hard_link(entry.path(), &to).is_err() {
            std::fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(link: &Path, to: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(link, to)
}

#[cfg(not(unix))]
fn symlink(link: &Path, to: &Path) -> io::Result<()> {
    std::fs::copy(link, to).map(|_| ())
}

/// Exchanges two folders in one step.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

/// Without an exchange rename: the old folder moved aside, the new one renamed in (a kill
/// between the two leaves the target missing, both sets kept under their temporary names).
#[cfg(not(target_os = "linux"))]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    let aside = a.with_extension("old");
    std::fs::rename(b, &aside)?;
    std::fs::rename(a, b)?;
    std::fs::rename(&aside, a)
}

/// Makes a folder's entries durable (a no-op where folders cannot be opened).
fn sync_dir(dir: &Path) -> io::Result<()> {
    match std::fs::File::open(dir) {
        Ok(f) => f.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_commit_replaces_the_set_and_keeps_other_entries() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("summary.csv"), "old").unwrap();
        std::fs::write(target.join("notes.txt"), "mine").unwrap();
        std::fs::write(target.join(".tmpAbC"), "junk").unwrap();
        let stage = RunFolder::stage(&target).unwrap();
        std::fs::write(stage.path().join("summary.csv"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(target.join("summary.csv")).unwrap(), "old");
        stage.commit().unwrap();
        let got = files(&target);
        let want = [("notes.txt", "mine"), ("summary.csv", "new")];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
        // Nothing left beside it.
        let names: Vec<_> = std::fs::read_dir(root.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_new_folder_is_renamed_in_and_a_dropped_stage_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("a/out");
        let stage = RunFolder::stage(&target).unwrap();
        std::fs::write(stage.path().join("x.csv"), "1").unwrap();
        stage.commit().unwrap();
        assert_eq!(files(&target), vec![("x.csv".to_string(), "1".to_string())]);
        let stage = RunFolder::stage(&target).unwrap();
        let staging = stage.path().to_path_buf();
        std::fs::write(staging.join("x.csv"), "2").unwrap();
        drop(stage);
        assert!(!staging.exists());
        assert_eq!(files(&target), vec![("x.csv".to_string(), "1".to_string())]);
    }

    #[test]
    fn stale_staging_folders_of_dead_processes_are_swept_up() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        // pid 4194305 is above Linux's pid_max limit (2^22): never a live process.
        let dead = root.path().join(".out.staging-4194305-0");
        let alive = root.path().join(format!(".out.staging-{}-99", std::process::id()));
        let other = root.path().join(".other.staging-4194305-0");
        for d in [&dead, &alive, &other] {
            std::fs::create_dir(d).unwrap();
        }
        let stage = RunFolder::stage(&target).unwrap();
        assert!(!dead.exists());
        assert!(alive.exists() && other.exists());
        drop(stage);
    }
}
