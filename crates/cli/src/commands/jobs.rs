//! `--jobs N` of `run` and `sweep`: the value's check and its default (the machine's cores),
//! and [`in_order`], which runs `run`'s protocol runs on N threads as if one after the other.
//!
//! Lifecycle of [`in_order`]: worker threads claim tasks in index order; a finished task's
//! stderr lines wait until every earlier task has printed its own, so stderr reads as the
//! sequential run's (whole lines, in task order); the first failure in task order stops the
//! claiming of later tasks, the tasks in flight are waited for and their results dropped, and
//! the failure is returned: what the sequential run would have printed before it was printed,
//! nothing after it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most this many worker threads: each holds a run's memory, and 100,000 threads took
/// about a minute to fail (issue 27 item 9).
pub const MAX_JOBS: usize = 256;

/// The worker threads of `--jobs` (`None`: the machine's cores), or the message refusing the
/// value (0, or above [`MAX_JOBS`]).
pub fn parse(given: Option<usize>) -> Result<usize, String> {
    match given {
        // The Python package's sweep gives the same message for 0 (python/src/outputs.rs).
        Some(0) => Err("--jobs: must be at least 1".to_string()),
        Some(n) if n > MAX_JOBS => Err(format!(
            "--jobs {n} is not allowed: from 1 to {MAX_JOBS} worker threads (the default is the \
             machine's cores)"
        )),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

/// What one task hands back: its value and the lines it prints on stderr, or the message of
/// its failure.
pub type TaskResult<T> = Result<(T, Vec<String>), String>;

/// Runs `task(0)` .. `task(count - 1)` on `jobs` threads (the calling thread alone for one)
/// and returns their values in index order; each task's stderr lines are printed in index
/// order as soon as every earlier task's are. `Err`: the lowest-indexed failure's message (the
/// caller prints it) or why the threads could not start.
pub fn in_order<T: Send>(
    count: usize,
    jobs: usize,
    task: &(dyn Fn(usize) -> TaskResult<T> + Sync),
) -> Result<Vec<T>, String> {
    in_order_to(count, jobs, task, &|line| eprintln!("{line}"))
}

/// [`in_order`] with the lines handed to `print` (one call per line, in order).
fn in_order_to<T: Send>(
    count: usize,
    jobs: usize,
    task: &(dyn Fn(usize) -> TaskResult<T> + Sync),
    print: &(dyn Fn(&str) + Sync),
) -> Result<Vec<T>, String> {
    let shared = Shared {
        next_claim: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        printer: Mutex::new(Printer {
            next: 0,
            waiting: BTreeMap::new(),
            values: Vec::new(),
            print,
        }),
    };
    let work = || shared.work(count, task);
    let threads = jobs.clamp(1, count.max(1));
    if threads == 1 {
        work();
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| format!("cannot start {threads} worker threads: {e}"))?;
        pool.scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|_| work());
            }
        });
    }
    let printer = shared.printer.into_inner().expect("printer lock");
    match printer.waiting.into_values().next() {
        Some(Err(message)) => Err(message),
        _ => {
            assert_eq!(printer.values.len(), count, "every task ran and printed");
            Ok(printer.values)
        }
    }
}

/// The state the worker threads share.
struct Shared<'p, T> {
    /// The index the next claim takes.
    next_claim: AtomicUsize,
    /// Set by a failure: no task is claimed after it.
    stop: AtomicBool,
    printer: Mutex<Printer<'p, T>>,
}

impl<T> Shared<'_, T> {
    /// One worker: claims tasks in index order until none is left or one has failed.
    fn work(&self, count: usize, task: &(dyn Fn(usize) -> TaskResult<T> + Sync)) {
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            let index = self.next_claim.fetch_add(1, Ordering::SeqCst);
            if index >= count {
                return;
            }
            let result = task(index);
            if result.is_err() {
                self.stop.store(true, Ordering::SeqCst);
            }
            self.printer.lock().expect("printer lock").finished(index, result);
        }
    }
}

/// Finished tasks not yet printed, and the values of those printed.
struct Printer<'p, T> {
    /// The lowest index not yet printed.
    next: usize,
    /// Finished tasks from `next` on; after a failure, it stays here (at `next`) for good.
    waiting: BTreeMap<usize, TaskResult<T>>,
    /// The values of tasks `0..next`.
    values: Vec<T>,
    /// Where the lines go (stderr).
    print: &'p (dyn Fn(&str) + Sync),
}

impl<T> Printer<'_, T> {
    /// Records task `index`'s result, then prints every task from `next` on that is ready.
    fn finished(&mut self, index: usize, result: TaskResult<T>) {
        assert!(index >= self.next, "task {index} finished twice");
        self.waiting.insert(index, result);
        while let Some(Ok(_)) = self.waiting.get(&self.next) {
            let Some(Ok((value, lines))) = self.waiting.remove(&self.next) else {
                unreachable!("checked just above")
            };
            for line in &lines {
                (self.print)(line);
            }
            self.values.push(value);
            self.next += 1;
        }
        if matches!(self.waiting.get(&self.next), Some(Err(_))) {
            // The sequential run ends here: later tasks' results are never shown.
            self.waiting.retain(|&i, _| i <= self.next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Runs `in_order_to`, returning its result and the lines printed.
    fn run(
        count: usize,
        jobs: usize,
        task: &(dyn Fn(usize) -> TaskResult<usize> + Sync),
    ) -> (Result<Vec<usize>, String>, Vec<String>) {
        let lines = Mutex::new(Vec::new());
        let print = |line: &str| lines.lock().unwrap().push(line.to_string());
        let result = in_order_to(count, jobs, task, &print);
        (result, lines.into_inner().unwrap())
    }

    fn lines_of(index: usize) -> Vec<String> {
        vec![format!("task {index} a"), format!("task {index} b")]
    }

    #[test]
    fn values_and_lines_come_in_task_order_when_tasks_finish_in_reverse() {
        // Task 0 waits until tasks 1, 2 and 3 have finished: they finish before it.
        let (done, finished) = mpsc::channel::<usize>();
        let finished = Mutex::new(finished);
        let done = Mutex::new(done);
        let task = |i: usize| {
            if i == 0 {
                let finished = finished.lock().unwrap();
                let mut others: Vec<usize> = (0..3).map(|_| finished.recv().unwrap()).collect();
                others.sort();
                assert_eq!(others, [1, 2, 3]);
            } else {
                done.lock().unwrap().send(i).unwrap();
            }
            Ok((i * 10, lines_of(i)))
        };
        let (result, lines) = run(4, 4, &task);
        assert_eq!(result, Ok(vec![0, 10, 20, 30]));
        let expected: Vec<String> = (0..4).flat_map(lines_of).collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn one_job_runs_on_the_calling_thread_in_order() {
        let caller = std::thread::current().id();
        let order = Mutex::new(Vec::new());
        let task = |i: usize| {
            assert_eq!(std::thread::current().id(), caller);
            order.lock().unwrap().push(i);
            Ok((i, lines_of(i)))
        };
        let (result, lines) = run(3, 1, &task);
        assert_eq!(result, Ok(vec![0, 1, 2]));
        assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn the_first_failure_in_task_order_is_returned_after_the_lines_before_it() {
        for jobs in [1, 2, 4, 8] {
            let ran = Mutex::new(Vec::new());
            let task = |i: usize| {
                ran.lock().unwrap().push(i);
                match i {
                    2 => Err("task 2 failed".to_string()),
                    4 => Err("task 4 failed".to_string()),
                    _ => Ok((i, lines_of(i))),
                }
            };
            let (result, lines) = run(6, jobs, &task);
            assert_eq!(result, Err("task 2 failed".to_string()), "jobs {jobs}");
            let expected: Vec<String> = (0..2).flat_map(lines_of).collect();
            assert_eq!(lines, expected, "jobs {jobs}: the lines of tasks 0 and 1 only");
            let mut ran = ran.into_inner().unwrap();
            ran.sort();
            // Tasks are claimed in order: 0..=2 ran, and later ones only while task 2 ran.
            assert_eq!(ran[..3], [0, 1, 2], "jobs {jobs}");
            if jobs == 1 {
                assert_eq!(ran, [0, 1, 2], "one at a time stops at the failure");
            }
        }
    }

    #[test]
    fn a_later_task_failing_first_does_not_hide_an_earlier_failure() {
        // Task 3 fails at once; task 1 fails only after task 3 has.
        let (failed, wait) = mpsc::channel::<()>();
        let (failed, wait) = (Mutex::new(failed), Mutex::new(wait));
        let task = |i: usize| match i {
            1 => {
                wait.lock().unwrap().recv().unwrap();
                Err("task 1 failed".to_string())
            }
            3 => {
                failed.lock().unwrap().send(()).unwrap();
                Err("task 3 failed".to_string())
            }
            _ => Ok((i, lines_of(i))),
        };
        let (result, lines) = run(4, 4, &task);
        assert_eq!(result, Err("task 1 failed".to_string()));
        assert_eq!(lines, lines_of(0));
    }

    #[test]
    fn jobs_are_checked_as_sweep_checks_them() {
        assert_eq!(parse(Some(0)), Err("--jobs: must be at least 1".to_string()));
        let too_many = parse(Some(MAX_JOBS + 1)).unwrap_err();
        assert!(too_many.starts_with("--jobs 257 is not allowed: from 1 to 256"), "{too_many}");
        assert_eq!(parse(Some(MAX_JOBS)), Ok(MAX_JOBS));
        assert!(parse(None).unwrap() >= 1);
    }
}
