//! Fast stepping changes nothing but the work done (issue 8): every scenario in `sims/` and
//! `sims/real/`, under every protocol it lists, and a set of generated chaos scenarios under
//! every protocol, give the same report with `Stepping::Fast` as with `Stepping::Plain`
//! (every CSV row equal; only `events`, the queue events handled, differs). Each comparison
//! first compares the two runs' observations (`lab::divergence`), so a failure names the first
//! differing observation: its simulated time, partition and member.

use lab::divergence::{first_divergence, run_traced};
use lab::Stepping;
use metrics::RunReport;
use model::RunStats;
use scenario::{ProtocolSpec, Scenario};
use std::path::{Path, PathBuf};

fn sims(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs both steppings and compares their observations, then their reports; returns the two
/// event counts and the number of observations compared (`lab::divergence` facts).
fn assert_same_counted(label: &str, s: &Scenario, protocol: ProtocolSpec) -> ((u64, u64), usize) {
    let run = |stepping| {
        run_traced(s, protocol, s.seed, stepping)
            .unwrap_or_else(|e| panic!("{label} {protocol}: {e}"))
    };
    let ((plain, plain_trace), (fast, fast_trace)) = (run(Stepping::Plain), run(Stepping::Fast));
    let facts = first_divergence(&plain_trace, &fast_trace)
        .unwrap_or_else(|divergence| panic!("{label} {protocol}: {divergence}"));
    let events = |r: &RunReport| r.summary.as_ref().expect("a summary").events;
    let counts = (events(&plain), events(&fast));
    let without_events = |mut r: RunReport| {
        r.summary.as_mut().expect("a summary").events = 0;
        r
    };
    let (plain, fast) = (without_events(plain), without_events(fast));
    assert_eq!(plain.summary, fast.summary, "{label} {protocol}: summary");
    assert_eq!(plain.partitions, fast.partitions, "{label} {protocol}: partitions");
    assert_eq!(plain.rebalances, fast.rebalances, "{label} {protocol}: rebalances");
    assert_eq!(plain.timeline, fast.timeline, "{label} {protocol}: timeline");
    assert_eq!(plain.ownership, fast.ownership, "{label} {protocol}: ownership");
    (counts, facts)
}

/// [`assert_same_counted`] without the count of observations.
fn assert_same(label: &str, s: &Scenario, protocol: ProtocolSpec) -> (u64, u64) {
    assert_same_counted(label, s, protocol).0
}

#[test]
fn fast_stepping_equals_plain_on_every_sim() {
    let (mut total, mut facts) = ((0, 0), 0);
    for file in sims("sims").into_iter().chain(sims("sims/real")) {
        let s = scenario::load(&file).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        for protocol in s.protocols.clone() {
            let ((plain, fast), compared) =
                assert_same_counted(&file.display().to_string(), &s, protocol);
            total = (total.0 + plain, total.1 + fast);
            facts += compared;
        }
    }
    // Not a speed test: fast stepping must actually keep steps out of the queue.
    assert!(total.1 * 2 < total.0, "fast {} events vs plain {}", total.1, total.0);
    // The observations were compared one by one: every processed record is one.
    assert!(facts > 1_000_000, "{facts} observations compared");
}

#[test]
fn fast_stepping_equals_plain_on_chaos_scenarios() {
    for seed in 0..12 {
        let s = lab::chaos_gen::generate(seed);
        for protocol in lab::chaos_gen::default_protocols() {
            assert_same(&format!("chaos seed {seed}"), &s, protocol);
        }
    }
}

/// The reference scenario of issue 8 in small: a rolling restart gives members other
/// partitions again and again (eager range renumbers them all), so fast stepping reuses cycles
/// recorded on earlier assignments, mapped to the new partitions. Constant arrivals in phase,
/// constant processing, auto-commit: every quiet stretch repeats. Records every 5 ms and a
/// 3 ms one-way delay keep a batch in progress at whole seconds (samples), so jumps also land
/// mid-batch, where the batch's partitions must be renamed too.
#[test]
fn fast_stepping_equals_plain_across_reassignments() {
    let topics: String = (0..5)
        .map(|t| format!("[[topic]]\nname = \"t{t}\"\npartitions = 6\nrate = 200.0\n\n"))
        .collect();
    let text = format!(
        r#"name = "small-rolling-restart"
duration = "40s"
seed = 3
protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"]

{topics}
[consumer]
processing = "0.5ms"
commit = "auto"
client = "java"

[consumer.config]
"auto.commit.interval.ms" = 5000

[network]
rtt = "6ms"

[group]
members = 6

[[event]]
at = "10s"
kind = "rolling-restart"
interval = "2s"
downtime = "3s"
"#
    );
    let s = scenario::parse_str(&text, Path::new("small-rolling-restart.toml"))
        .unwrap_or_else(|e| panic!("{e:?}"));
    for protocol in s.protocols.clone() {
        assert_same("small rolling restart", &s, protocol);
    }
}

/// Heartbeat responses that change nothing, to members busy with a batch most of the time
/// (90% load: 1,000 records/s at 0.9 ms each), every 300 ms: fast stepping drops those that reach
/// a member its cycle shows busy at that instant, without catching the member up; the report
/// must not change. A 7 ms one-way delay puts responses at every phase of the batches. (About
/// 400 responses are dropped here, counted with a temporary print. Such a response to an idle
/// member is not a no-op: its poll wakes, finds nothing and waits again, one place further
/// in its fetch rotation; in a stochastic run that wake-up waits with the member's aside
/// steps, `fast_stepping_equals_plain_with_heartbeats_to_waiting_members` below.)
#[test]
fn fast_stepping_equals_plain_with_frequent_heartbeats_to_busy_members() {
    let text = r#"name = "busy-heartbeats"
duration = "30s"
seed = 5
protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"]

[[topic]]
name = "t0"
partitions = 4
rate = 400.0

[[topic]]
name = "t1"
partitions = 4
rate = 100.0

[consumer]
processing = "0.9ms"
commit = "auto"
client = "java"

[consumer.config]
"heartbeat.interval.ms" = 300
"auto.commit.interval.ms" = 7000

[broker.config]
"group.consumer.heartbeat.interval.ms" = 300

[network]
rtt = "14ms"

[group]
members = 2
"#;
    let s = scenario::parse_str(text, Path::new("busy-heartbeats.toml"))
        .unwrap_or_else(|e| panic!("{e:?}"));
    for protocol in s.protocols.clone() {
        assert_same("busy heartbeats", &s, protocol);
    }
}

/// Members of 100 partitions each (ten topics of 20): their steps do not repeat within the
/// catch-ups between samples, so their recordings end in vain and back off
/// (`world/stepper/lazy.rs`, `RecordBackoff`: 40 s are about 800 steps a member, past the first
/// wait); the signatures place each batch's parts among the partitions by a search.
#[test]
fn fast_stepping_equals_plain_with_many_partitions_a_member() {
    let mut text = String::from(
        "name = \"wide-members\"\nduration = \"40s\"\nseed = 3\n\
         protocols = [\"eager:range\", \"cooperative:cooperative-sticky\"]\n\n",
    );
    for topic in 0..10 {
        text.push_str(&format!("[[topic]]\nname = \"t{topic}\"\npartitions = 20\nrate = 10.0\n\n"));
    }
    text.push_str(
        "[consumer]\nprocessing = \"0.5ms\"\n\n\
         [broker.config]\n\"group.initial.rebalance.delay.ms\" = 0\n\n[group]\nmembers = 2\n",
    );
    let s = scenario::parse_str(&text, Path::new("wide-members.toml"))
        .unwrap_or_else(|e| panic!("{e:?}"));
    for protocol in s.protocols.clone() {
        let (plain, fast) = assert_same("wide members", &s, protocol);
        assert!(fast < plain, "{protocol}: fast {fast} events vs plain {plain}");
    }
}

/// One fast run of `protocol` with its catch-ups shared out over `threads` threads (from two
/// members on): its report and its counts.
fn run_on_threads(s: &Scenario, protocol: ProtocolSpec, threads: usize) -> (RunReport, RunStats) {
    let threads = model::CatchUpThreads { threads, min_members: 2 };
    let mut collector = metrics::Collector::new(lab::run_labels(s, protocol, s.seed));
    let (seed, fast, probe) = (s.seed, Stepping::Fast, &mut model::NoProbe);
    let stats = model::simulate_on_threads(s, protocol, seed, fast, threads, &mut collector, probe);
    (collector.finish(), stats)
}

/// The members' catch-ups before each sample shared out over threads
/// (`model::simulate_on_threads`, `world/stepper/parallel.rs`) change nothing: every scenario
/// in `sims/` and `sims/real/`, under every protocol it lists, gives the same report (events
/// included) on three threads as on one, and the stochastic ones do share them out (from two
/// members on, the default).
#[test]
fn catch_ups_on_three_threads_equal_one_on_every_sim() {
    let mut shared = 0;
    for file in sims("sims").into_iter().chain(sims("sims/real")) {
        let s = scenario::load(&file).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        for protocol in s.protocols.clone() {
            let run = |threads| run_on_threads(&s, protocol, threads);
            let ((one, one_stats), (three, three_stats)) = (run(1), run(3));
            assert_eq!(one_stats.shared_catch_ups, 0, "{} {protocol}: one thread", file.display());
            assert_eq!(one_stats.events, three_stats.events, "{} {protocol}", file.display());
            assert_eq!(one, three, "{} {protocol}: the reports", file.display());
            shared += three_stats.shared_catch_ups;
        }
    }
    assert!(shared > 100, "only {shared} samples' catch-ups were shared out");
}

/// Four members of one Poisson topic (8 partitions at 200 records/s, lognormal processing),
/// 20 s, every protocol but TubeMQ's and manual assignment, a rolling restart of one member
/// every 2 s from 5 s, each down 1 s.
fn four_members_restarting() -> Scenario {
    let text = "name = \"restart-shared\"\nduration = \"20s\"\nseed = 7\n\
        protocols = [\"eager:range\", \"cooperative:cooperative-sticky\", \"consumer:uniform\"]\n\n\
        [[topic]]\nname = \"t\"\npartitions = 8\nrate = 200.0\narrival = \"poisson\"\n\n\
        [consumer]\nprocessing = { dist = \"lognormal\", mean = \"1ms\", p99 = \"5ms\" }\n\n\
        [broker.config]\n\"group.initial.rebalance.delay.ms\" = 0\n\n[group]\nmembers = 4\n\n\
        [[event]]\nat = \"5s\"\nkind = \"rolling-restart\"\ninterval = \"2s\"\ndowntime = \"1s\"\n";
    scenario::parse_str(text, Path::new("restart-shared.toml")).unwrap_or_else(|e| panic!("{e:?}"))
}

/// A rebalance reaches each member at its own instant (its heartbeat response, then its join
/// and sync responses), and each such input catches its member up; at most every 100 ms of
/// simulated time (`world/stepper/parallel.rs`, `World::share_out_before_catch_up`) every
/// member's catch-ups are shared out first. Four members, 20 s sampled every second: the
/// samples and the end share out at most 21 times (18 for eager when only they do); a rolling
/// restart (one member every 2 s from 5 s, each down 1 s) rebalances the group, and its
/// inputs share out more (24 for eager, 28 for cooperative, 33 for KIP-848), with the same
/// report as on one thread.
#[test]
fn rebalance_inputs_share_out_catch_ups() {
    let s = four_members_restarting();
    for protocol in s.protocols.clone() {
        let ((one, _), (three, stats)) =
            (run_on_threads(&s, protocol, 1), run_on_threads(&s, protocol, 3));
        assert_eq!(one, three, "{protocol}: the reports");
        let rebalances = three.summary.as_ref().expect("a summary").rebalances;
        let shared = stats.shared_catch_ups;
        assert!(rebalances >= 2, "{protocol}: {rebalances} rebalances");
        assert!(shared > 21, "{protocol}: shared out {shared} times");
    }
}

/// An observer that keeps its latencies as counts per whole millisecond and checks when the
/// world gives the counts it made ahead: `expected` counts each report's records from its
/// lists (what the counts must add up to), `given_table` what the world gave.
#[derive(Default)]
struct CountsAtTheEnd {
    expected: Vec<u64>,
    given_table: Vec<u64>,
    reports: u64,
    reports_after_a_giving: u64,
    givings: u64,
    givings_after_the_end: u64,
    ended: bool,
}

impl model::Observer for CountsAtTheEnd {
    fn observe(&mut self, observation: model::Observation) {
        if matches!(observation, model::Observation::End { .. }) {
            self.ended = true;
        }
    }

    fn latency_counter(&self) -> Option<model::CountLatencies> {
        Some(|counts, arrivals, ends| {
            counts.count_listed(arrivals, ends, |us| (us / 1_000) as usize)
        })
    }

    fn observe_processed_counted(
        &mut self,
        _: model::Tp,
        _: u64,
        (arrivals, ends): (&[sim_core::SimTime], &[sim_core::SimTime]),
        _: u64,
        _: &mut model::LatencyCounts,
    ) {
        for (arrival, end) in arrivals.iter().zip(ends) {
            let class = (model::latency_us(*arrival, *end) / 1_000) as usize;
            if class >= self.expected.len() {
                self.expected.resize(class + 1, 0);
            }
            self.expected[class] += 1;
        }
        self.reports += 1;
        self.reports_after_a_giving += u64::from(self.givings > 0);
    }

    fn observe_counted_latencies(&mut self, counted: &mut model::LatencyCounts) {
        self.givings += 1;
        self.givings_after_the_end += u64::from(self.ended);
        counted.drain(|class, count| {
            if class >= self.given_table.len() {
                self.given_table.resize(class + 1, 0);
            }
            self.given_table[class] += count;
        });
        assert_eq!(counted.total(), 0, "a drain leaves nothing counted");
    }
}

/// A shared-out round's held reports have their records counted per latency class on the
/// run's threads, each piece of work into its own counts, kept round after round; the world
/// gives every piece's counts once, at the end of the run, after the last report and before
/// `Observation::End` (`World::give_counted_latencies`). Over `four_members_restarting` on
/// three threads (each protocol): every counted report comes before the first giving, the
/// givings (one a piece: at most 3 threads x 4 pieces) come before the end, and the counts
/// given equal, class by class, the counts of the reports' own lists.
#[test]
fn latencies_counted_ahead_are_given_once_at_the_end() {
    let s = four_members_restarting();
    for protocol in s.protocols.clone() {
        let threads = model::CatchUpThreads { threads: 3, min_members: 2 };
        let mut counts = CountsAtTheEnd::default();
        let (seed, fast, probe) = (s.seed, Stepping::Fast, &mut model::NoProbe);
        let stats =
            model::simulate_on_threads(&s, protocol, seed, fast, threads, &mut counts, probe);
        assert!(stats.shared_catch_ups > 21, "{protocol}: shared out {}", stats.shared_catch_ups);
        assert!(counts.ended, "{protocol}: the run ended");
        assert!(counts.reports > 100, "{protocol}: {} reports counted ahead", counts.reports);
        assert_eq!(counts.reports_after_a_giving, 0, "{protocol}: reports after a giving");
        assert!((1..=12).contains(&counts.givings), "{protocol}: {} givings", counts.givings);
        assert_eq!(counts.givings_after_the_end, 0, "{protocol}: givings after the end");
        let mut expected = counts.expected.clone();
        expected.resize(counts.given_table.len().max(expected.len()), 0);
        let total: u64 = expected.iter().sum();
        assert!(total > 10_000, "{protocol}: {total} records counted ahead");
        assert_eq!(counts.given_table, expected, "{protocol}: the counts per class");
    }
}

/// Heartbeat responses that change nothing, to members that wait in `poll()` most of the time
/// (about 8% load: 150 records/s a member at 0.5 ms each), every 300 ms: fast stepping keeps
/// such a response's wake-up with the member's aside steps and runs it in their order at its
/// next catch-up (`World::defer_wake`) instead of catching the member up at the response; the
/// wake-up moves the member's fetch rotation by one, so a wake-up run at the wrong place among
/// its steps changes which partition a later fetch reads first. The report must not change,
/// on one thread or shared out over three, and wake-ups must have been deferred.
#[test]
fn fast_stepping_equals_plain_with_heartbeats_to_waiting_members() {
    let text = r#"name = "waiting-heartbeats"
duration = "30s"
seed = 11
protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"]

[[topic]]
name = "t"
partitions = 6
rate = 50.0
arrival = "poisson"

[consumer]
processing = { dist = "lognormal", mean = "0.5ms", p99 = "2ms" }
commit = "auto"
client = "java"

[consumer.config]
"heartbeat.interval.ms" = 300

[broker.config]
"group.consumer.heartbeat.interval.ms" = 300
"group.initial.rebalance.delay.ms" = 0

[network]
rtt = "14ms"

[group]
members = 2
"#;
    let s = scenario::parse_str(text, Path::new("waiting-heartbeats.toml"))
        .unwrap_or_else(|e| panic!("{e:?}"));
    for protocol in s.protocols.clone() {
        assert_same("waiting heartbeats", &s, protocol);
        let ((one, one_stats), (three, three_stats)) =
            (run_on_threads(&s, protocol, 1), run_on_threads(&s, protocol, 3));
        assert_eq!(one, three, "{protocol}: the reports");
        let deferred = (one_stats.deferred_wakes, three_stats.deferred_wakes);
        eprintln!("{protocol}: deferred {deferred:?}");
        assert!(deferred.0 > 50 && deferred.1 > 50, "{protocol}: deferred {deferred:?}");
    }
}
