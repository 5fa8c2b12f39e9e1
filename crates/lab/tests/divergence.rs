//! The divergence check (issue 23, item 5; `lab::divergence`) catches a divergence and names
//! the time, partition and member one can derive independently. (That plain and fast stepping
//! never diverge on every scenario in `sims/` and `sims/real/` is `tests/stepping.rs`, which
//! runs this check before comparing the reports.)

use lab::divergence::{check_stepping, first_divergence, run_traced, Fact, Trace, Track};
use lab::Stepping;
use model::observe::{RecordByRecord, RecordObserver};
use model::{NoProbe, Observation, Observer, RecordTimes, Tp};
use scenario::{ProtocolSpec, Scenario};
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::path::Path;

fn load(file: &Path) -> Scenario {
    scenario::load(file).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()))
}

fn trace(s: &Scenario, protocol: ProtocolSpec, seed: u64, stepping: Stepping) -> Trace {
    run_traced(s, protocol, seed, stepping).unwrap_or_else(|e| panic!("{protocol}: {e}")).1
}

/// The first processed record of `tp` ending at or after `from`: its index in the partition's
/// record track, offset, end, and the partition's owner then (derived here from the access
/// changes: the latest at or before the record's end).
fn record_at_or_after(
    trace: &Trace,
    tp: Tp,
    from: SimTime,
) -> (usize, u64, SimTime, Option<String>) {
    let records = trace.facts(Track::Records(tp));
    let (index, offset, end) = records
        .iter()
        .enumerate()
        .find_map(|(i, f)| match **f {
            Fact::Record { offset, end, .. } if end >= from => Some((i, offset, end)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no record of {tp:?} at or after {from}"));
    let mut owner = None;
    for fact in trace.facts(Track::Access(tp)) {
        match fact {
            Fact::Access { at, owner: o, .. } if *at <= end => {
                owner = o.as_deref().map(str::to_string)
            }
            _ => {}
        }
    }
    (index, offset, end, owner)
}

fn crash_scenario() -> Scenario {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims/crash.toml"))
}

fn eager(s: &Scenario) -> ProtocolSpec {
    *s.protocols.iter().find(|p| p.to_string() == "eager:range").expect("eager:range listed")
}

#[test]
fn a_changed_record_is_the_first_divergence_with_its_time_partition_and_owner() {
    let s = crash_scenario();
    let protocol = eager(&s);
    let plain = trace(&s, protocol, s.seed, Stepping::Plain);
    let fast = trace(&s, protocol, s.seed, Stepping::Fast);
    assert_eq!(first_divergence(&plain, &fast), Ok(plain.len()));
    assert_eq!(check_stepping(&s, protocol, s.seed).expect("both run"), Ok(plain.len()));

    // Change the first record of orders-2 ending from 100 s on (its end 1 ns later), and a
    // later record of orders-5 (from 200 s): the earlier one is the first divergence.
    let (tp, later_tp) = (Tp { topic: 0, partition: 2 }, Tp { topic: 0, partition: 5 });
    let (index, offset, end, owner) = record_at_or_after(&fast, tp, SimTime::from_secs(100));
    let (later_index, ..) = record_at_or_after(&fast, later_tp, SimTime::from_secs(200));
    let mut perturbed = fast.clone();
    let one_ns_later = |f: &mut Fact| {
        if let Fact::Record { end, .. } = f {
            *end += SimTime::from_nanos(1);
        }
    };
    assert!(perturbed.change_fact(Track::Records(later_tp), later_index, one_ns_later));
    assert!(perturbed.change_fact(Track::Records(tp), index, one_ns_later));

    let d = first_divergence(&plain, &perturbed).expect_err("a divergence");
    assert_eq!(d.at, end, "the earlier side's time: the record's true end");
    assert_eq!((d.track, d.tp(), d.index), (Track::Records(tp), Some(tp), index));
    assert_eq!(d.tp_name, "orders-2");
    assert_eq!(d.member, owner);
    assert!(d.member.is_some(), "orders-2 has an owner at 100 s");
    let Some(Fact::Record { offset: o, end: e, .. }) = d.facts.1 else { panic!("{d}") };
    assert_eq!((o, e), (offset, end + SimTime::from_nanos(1)));
    let text = d.to_string();
    assert!(text.contains("partition orders-2"), "{text}");
    assert!(text.contains(&format!("record {offset} processed")), "{text}");
    assert!(text.contains("plain: ") && text.contains("fast: "), "{text}");
}

#[test]
fn a_missing_record_is_a_divergence_at_its_time() {
    let s = crash_scenario();
    let protocol = eager(&s);
    let plain = trace(&s, protocol, s.seed, Stepping::Plain);
    let mut fast = plain.clone();
    let tp = Tp { topic: 0, partition: 7 };
    let (index, offset, end, owner) = record_at_or_after(&plain, tp, SimTime::from_secs(30));
    let removed = fast.remove_fact(Track::Records(tp), index).expect("the record");
    assert!(matches!(removed, Fact::Record { offset: o, .. } if o == offset));
    let d = first_divergence(&plain, &fast).expect_err("a divergence");
    // The plain side still has the record at `index`; the other side has the next one, which
    // ends later: the divergence is at the removed record's end.
    assert_eq!((d.at, d.tp(), d.index, d.member), (end, Some(tp), index, owner));
    assert!(matches!(d.facts.0, Some(Fact::Record { offset: o, .. }) if o == offset));
    assert!(matches!(d.facts.1, Some(Fact::Record { offset: o, .. }) if o == offset + 1));
}

/// A changed access change (another owner) is found on the access track, named by the
/// owner on the first side.
#[test]
fn a_changed_owner_is_the_first_divergence_of_the_access_track() {
    let s = crash_scenario();
    let plain = trace(&s, eager(&s), s.seed, Stepping::Plain);
    let tp = Tp { topic: 0, partition: 3 };
    let accesses = plain.facts(Track::Access(tp));
    let index = accesses
        .iter()
        .position(|f| matches!(f, Fact::Access { at, owner: Some(_), .. } if *at > SimTime::from_secs(60)))
        .expect("orders-3 gets an owner after the crash");
    let Fact::Access { at, owner: Some(owner), .. } = accesses[index].clone() else {
        unreachable!()
    };
    let mut other = plain.clone();
    assert!(other.change_fact(Track::Access(tp), index, |f| {
        if let Fact::Access { owner, .. } = f {
            *owner = Some("nobody".into());
        }
    }));
    let d = first_divergence(&plain, &other).expect_err("a divergence");
    assert_eq!((d.at, d.track, d.index), (at, Track::Access(tp), index));
    assert_eq!(d.member.as_deref(), Some(&*owner));
}

/// The owner of `tp` just before `at`, derived from its access changes.
fn owner_before(trace: &Trace, tp: Tp, at: SimTime) -> Option<String> {
    let mut owner = None;
    for fact in trace.facts(Track::Access(tp)) {
        match fact {
            Fact::Access { at: t, owner: o, .. } if *t < at => {
                owner = o.as_deref().map(str::to_string)
            }
            _ => {}
        }
    }
    owner
}

/// Two runs of `sims/crash.toml` whose only difference is the time c1 crashes (2m, and 2m10s):
/// they are the same run until 2m, when c1 dies and its partitions become `owner-dead` in the
/// first. The first divergence is c1's member state `dead` (the group's track comes first in
/// a tie), the first on each of c1's partitions' tracks their access change to `owner-dead`,
/// and every track agrees before 2m.
#[test]
fn runs_that_differ_from_a_crash_on_diverge_at_the_crash() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims/crash.toml");
    let text = std::fs::read_to_string(&path).expect("sims/crash.toml");
    assert!(text.contains("at = \"2m\""), "the crash at 2m");
    // Lock-step timing: the crash falls exactly at its `at` (docs/timing.md).
    let exact = |t: String| format!("{t}\n[timing]\nexact = true\n");
    let later = scenario::parse_str(&exact(text.replace("at = \"2m\"", "at = \"2m10s\"")), &path)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let s = scenario::parse_str(&exact(text.clone()), &path).unwrap_or_else(|e| panic!("{e:?}"));
    let protocol = eager(&s);
    let a = trace(&s, protocol, s.seed, Stepping::Fast);
    let b = trace(&later, protocol, s.seed, Stepping::Plain);
    let crash = SimTime::from_secs(120);
    let c1_partitions: Vec<Tp> = (0..12)
        .map(|partition| Tp { topic: 0, partition })
        .filter(|&tp| owner_before(&b, tp, crash).as_deref() == Some("c1"))
        .collect();
    assert!(!c1_partitions.is_empty(), "c1 owns partitions before it crashes");

    let d = first_divergence(&a, &b).expect_err("the runs differ");
    assert_eq!(d.at, crash, "{d}");
    assert_eq!(d.track, Track::Group, "{d}");
    assert_eq!(d.member.as_deref(), Some("c1"), "{d}");
    let Some(Fact::MemberState { at, state, .. }) = &d.facts.0 else { panic!("{d}") };
    assert_eq!((*at, state.name()), (crash, "dead"), "{d}");
    assert_ne!(d.facts.0, d.facts.1, "{d}");
    for &tp in &c1_partitions {
        let track = Track::Access(tp);
        let at_crash = |t: &Trace| {
            let facts = t.facts(track).into_iter().zip(t.times(track));
            facts.filter(|(_, at)| *at >= crash).map(|(f, _)| f.clone()).next()
        };
        let (first, second) = (at_crash(&a), at_crash(&b));
        let Some(Fact::Access { at, state, .. }) = &first else { panic!("{tp:?}: {first:?}") };
        assert_eq!((*at, state.name()), (crash, "owner-dead"), "{tp:?}");
        assert_ne!(first, second, "{tp:?}");
    }
    // Every track is equal on its facts before 2m (the lists cut at the same time).
    let before = |t: &Trace, track: Track| -> Vec<Fact> {
        let (facts, times) = (t.facts(track), t.times(track));
        facts.into_iter().zip(times).filter(|(_, at)| *at < d.at).map(|(f, _)| f.clone()).collect()
    };
    assert_eq!(a.tracks(), b.tracks());
    for track in a.tracks() {
        assert_eq!(before(&a, track), before(&b, track), "{track:?} before {}", d.at);
    }
}

/// Every processed record the model's `RecordByRecord` adapter hands on, by partition.
#[derive(Default)]
struct Records(BTreeMap<Tp, Vec<(SimTime, u64, SimTime)>>);

impl RecordObserver for Records {
    fn record(&mut self, tp: Tp, offset: u64, arrival: SimTime, end: SimTime) {
        self.0.entry(tp).or_default().push((end, offset, arrival));
    }
    fn other(&mut self, _: Observation) {}
}

/// A run observed through the model's adapter gives, partition by partition, the records of
/// the divergence check's trace: the same records (sorted as the trace sorts them: end of
/// processing, offset, arrival), under fast stepping, where all three encodings occur.
#[test]
fn the_record_by_record_adapter_gives_the_traces_records() {
    let mut s = crash_scenario();
    // Constant arrivals and processing: fast stepping's periodic jumps report stretches.
    for topic in &mut s.topics {
        topic.arrival = scenario::Arrival::Constant;
    }
    s.duration = SimTime::from_secs(150);
    let protocol = eager(&s);
    let mut observations: Vec<Observation> = Vec::new();
    model::simulate_stepped(&s, protocol, s.seed, Stepping::Fast, &mut observations, &mut NoProbe);
    let count = |f: fn(&Observation) -> bool| observations.iter().filter(|o| f(o)).count();
    let periodic = count(|o| matches!(o, Observation::ProcessedPeriodic { .. }));
    let linear =
        count(|o| matches!(o, Observation::Processed { times: RecordTimes::Linear { .. }, .. }));
    assert!(periodic > 0 && linear > 0, "periodic {periodic}, linear {linear}: both encodings");
    let mut adapter = RecordByRecord(Records::default());
    for o in observations {
        adapter.observe(o);
    }
    let mut by_adapter = adapter.0 .0;
    let trace = trace(&s, protocol, s.seed, Stepping::Fast);
    let partitions: Vec<Tp> = trace
        .tracks()
        .into_iter()
        .filter_map(|t| match t {
            Track::Records(tp) => Some(tp),
            _ => None,
        })
        .collect();
    assert_eq!(partitions.len(), 12, "every partition of orders has records");
    let total: usize = by_adapter.values().map(Vec::len).sum();
    assert!(total > 30_000, "{total} records: 150 s of 20 records/s");
    for tp in partitions {
        let mut mine = by_adapter.remove(&tp).unwrap_or_default();
        mine.sort();
        let traced: Vec<(SimTime, u64, SimTime)> = trace
            .facts(Track::Records(tp))
            .into_iter()
            .map(|f| match *f {
                Fact::Record { offset, arrival, end } => (end, offset, arrival),
                ref other => panic!("not a record: {other}"),
            })
            .collect();
        assert_eq!(mine, traced, "{tp:?}");
    }
    assert!(by_adapter.is_empty(), "records of partitions the trace lacks: {by_adapter:?}");
}

/// The time of an observation that carries one (`observe.rs`: these come in time order).
fn timed(o: &Observation) -> Option<SimTime> {
    match o {
        Observation::PartitionsAdded { at, .. }
        | Observation::Access { at, .. }
        | Observation::RebalanceStarted { at, .. }
        | Observation::RebalanceEnded { at, .. }
        | Observation::Commit { at, .. }
        | Observation::MaxPollExpired { at, .. }
        | Observation::MemberState { at, .. }
        | Observation::Sample { at, .. }
        | Observation::End { at, .. } => Some(*at),
        Observation::Topics { .. }
        | Observation::Processed { .. }
        | Observation::ProcessedPeriodic { .. }
        | Observation::Skip { .. } => None,
    }
}

/// The observation contract (`model::observe`): `Topics` first, `End` last, and every
/// observation with a time in time order, under both steppings, for every protocol of
/// scenarios with a crash, a pause, a stall (whose end is reported before the first event
/// after it) and a scale-out.
#[test]
fn timed_observations_come_in_time_order() {
    let sims = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims");
    for file in
        ["crash.toml", "gc-pause.toml", "stall.toml", "kip848-scale-out.toml", "tubemq.toml"]
    {
        let s = load(&sims.join(file));
        for &protocol in &s.protocols {
            for stepping in [Stepping::Plain, Stepping::Fast] {
                let mut seen: Vec<Observation> = Vec::new();
                model::simulate_stepped(&s, protocol, s.seed, stepping, &mut seen, &mut NoProbe);
                let what = format!("{file} {protocol} {stepping:?}");
                assert!(matches!(seen.first(), Some(Observation::Topics { .. })), "{what}");
                assert!(matches!(seen.last(), Some(Observation::End { .. })), "{what}");
                let times: Vec<SimTime> = seen.iter().filter_map(timed).collect();
                let back = times.windows(2).position(|w| w[1] < w[0]);
                assert_eq!(back, None, "{what}: a timed observation before its predecessor");
            }
        }
    }
}
