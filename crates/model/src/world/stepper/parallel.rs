//! A sample's catch-ups shared out over the run's threads (issue 29: both cores for the main
//! job, within one run).
//!
//! Before each sample (and at the end) every member with aside steps catches up to the same
//! instant (`World::count_or_catch_up_all`), one after the other in slot order. In a
//! stochastic run that is most of the run's work: a member's steps between two samples, its
//! draws among them. Those catch-ups are independent of each other when every member folds
//! its reports (`fold.rs`: it is the book owner, or there is none, of every partition it
//! holds): a catch-up then writes only the member, its stream, its pending step and the logs
//! of its own partitions (each drawn from the partition's own stream, `workload.rs`), and
//! reads nothing another member's catch-up writes. So they run here on the run's rayon
//! threads, each with `&mut` borrows of its partitions' logs ([`LentLogs`], handed out in one
//! walk over the logs) and its reports held instead of given; then, on the calling thread and
//! in slot order, each member's reports are given and its `max.poll.interval.ms` timer armed,
//! exactly as the one-after-the-other catch-ups give and arm them. Every output stays the
//! same, whatever the number of threads (`lab/tests/stepping.rs` runs the scenarios on one and
//! on three).
//!
//! Once caught up, each catch-up also draws its partitions' logs past the next sample (drawing
//! a partition's arrivals sooner changes none of them) and sums their log ends at the sample:
//! the calling thread's catch-ups between two samples (a member's auto-commit) then find their
//! arrivals drawn, and the sample's `produced` adds only the log ends of the partitions no
//! member caught up on ([`Logs::log_end_sum_unlent`]).
//!
//! When the observer keeps its latencies as counts per class (the collector), each piece also
//! counts its reports' records per class as it holds them, while their times are in its
//! core's cache (`latency_counts.rs`); the calling thread then gives each report with its
//! largest latency, and the piece's counts after the round's reports (a count per class is a
//! sum: the same histogram; a report with records processed before takes them back out).
//!
//! The same happens before a member catches up for an input that changes something, when the
//! last shared-out catch-ups are [`SHARE_OUT_AFTER`] behind
//! (`World::share_out_before_catch_up`): a rebalance reaches each member at its own instant,
//! and without it each member would catch up since the last sample one at a time on the
//! calling thread.
//!
//! Where any member with aside steps does not qualify (its partitions' book owner is another
//! member, its processing is constant, a log is a topic's shared one, two of them hold one
//! partition), where fewer than the run's [`CatchUpThreads::min_members`] catch up, or where
//! the run has one thread, the catch-ups run one after the other as before. Cycles (constant
//! runs) are never looked for here: a run whose steps may repeat counts them instead
//! (`cycle.rs`).

use super::cycle::Bound;
use super::fold::FoldedReports;
use super::lazy::{run_folded_steps, AsideMember};
use super::Fast;
use crate::consumer::Consumer;
use crate::latency_counts::{CountLatencies, LatencyCounts};
use crate::records::RecordTimes;
use crate::types::Conn;
use crate::workload::PartitionLog;
use crate::world::{Logs, LogsByPartition, World};
use assignors::Tp;
use rayon::prelude::*;
use sim_core::SimTime;
use std::ops::Range;

/// Pieces of work per thread (a piece: consecutive members, with one fold and one report
/// buffer): more pieces even out members of unequal work.
const PIECES_PER_THREAD: usize = 4;

/// How long after the last shared-out catch-ups (or the last try) a member's catch-up for an
/// input that changes something shares out every member's first
/// ([`World::share_out_before_catch_up`]). Measured on the stochastic hour cut to 44 minutes,
/// eager (docs/performance.md, "(15)"): 272 s against 299-351 s for the build before,
/// alternated, same bytes; counted with a temporary counter when every input shared out (a
/// heartbeat response that changes nothing too), its inputs' catch-ups on the calling thread
/// ran 36 million steps instead of 1,059 million.
const SHARE_OUT_AFTER: SimTime = SimTime::from_millis(100);

/// The threads of shared-out catch-ups and their buffers, kept from sample to sample.
#[derive(Default)]
pub(in crate::world) struct SharedOut {
    /// The run's threads (none: catch-ups run one after the other).
    pool: Option<rayon::ThreadPool>,
    /// Members catching up at least, for their catch-ups to be shared out.
    min_members: usize,
    /// How many times catch-ups were shared out.
    times: u64,
    /// One a piece of work.
    pieces: Vec<Piece>,
    /// Per topic and partition: the member catching up (its index among them) that reads
    /// it, or [`NO_BORROWER`].
    borrower: Vec<Vec<u32>>,
    /// The instant of the last shared-out catch-ups and the log end offsets there of the
    /// partitions lent to them, summed on the threads (a sample's `produced`).
    lent_log_ends: Option<(SimTime, u64)>,
    /// When catch-ups were last shared out or tried to be (refused: a member that does not
    /// qualify).
    last_try: Option<SimTime>,
}

impl SharedOut {
    /// Starts the threads of `threads` for the run's catch-ups (none for one, or if they
    /// cannot start: the catch-ups then run one after the other, with the same results).
    pub(in crate::world) fn start_threads(&mut self, threads: CatchUpThreads) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.threads);
        self.pool = (threads.threads >= 2).then(|| pool.build().ok()).flatten();
        self.min_members = threads.min_members;
    }

    /// How many times catch-ups were shared out.
    pub(in crate::world) fn times(&self) -> u64 {
        self.times
    }

    /// The lent partitions' log ends summed at `now`, if catch-ups to `now` were the last
    /// shared out (then [`SharedOut::borrowers`] marks those partitions); forgotten here.
    pub(in crate::world) fn take_lent_log_ends(&mut self, now: SimTime) -> Option<u64> {
        self.lent_log_ends.take().and_then(|(at, sum)| (at == now).then_some(sum))
    }

    /// Per topic and partition, the borrower of the last shared-out catch-ups or
    /// [`NO_BORROWER`].
    pub(in crate::world) fn borrowers(&self) -> &[Vec<u32>] {
        &self.borrower
    }
}

/// How a run shares its members' catch-ups out over threads ([`crate::simulate_on_threads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatchUpThreads {
    /// Threads (one: the catch-ups run one after the other, on the calling thread).
    pub threads: usize,
    /// Members catching up at least, for a sample's catch-ups to be shared out.
    pub min_members: usize,
}

impl CatchUpThreads {
    /// Members catching up at least, by default: any two. Measured (docs/performance.md,
    /// "(14)"): since the shared-out catch-ups also draw their logs past the next sample,
    /// the user's deployment scenario (40 members) runs 4-23% faster in wall time on two
    /// threads and its 16- and 4-member forms 22-37% (each for about 1.3x the CPU time);
    /// before that, forty members gained nothing and the default was a hundred ("(13)").
    pub const MIN_MEMBERS: usize = 2;

    /// `threads` threads, sharing out from [`CatchUpThreads::MIN_MEMBERS`] members on.
    pub fn new(threads: usize) -> CatchUpThreads {
        CatchUpThreads { threads, min_members: CatchUpThreads::MIN_MEMBERS }
    }
}

/// A piece of work's fold and the reports its members' catch-ups hold.
#[derive(Default)]
struct Piece {
    folded: FoldedReports,
    reports: HeldReports,
}

/// Reports held for the world, in the order they were made: each a partition's records from
/// its first offset, their arrivals and ends one list each; and, when the observer keeps its
/// latencies as counts per class, their records counted per class ahead (`latency_counts.rs`).
#[derive(Default)]
struct HeldReports {
    heads: Vec<ReportHead>,
    arrivals: Vec<SimTime>,
    ends: Vec<SimTime>,
    /// The records of every report the piece held, round after round, counted per the
    /// observer's class (none counted when it names no class); the observer takes them at the
    /// end of the run ([`World::give_counted_latencies`]).
    counted: LatencyCounts,
}

/// One held report: at `at`, `records` records of `tp` from offset `first`, the largest of
/// their latencies `max_us` (0 when not counted ahead).
struct ReportHead {
    at: SimTime,
    tp: Tp,
    first: u64,
    records: usize,
    max_us: u64,
}

impl HeldReports {
    /// Holds no report (the counts stay until the end of the run).
    fn clear(&mut self) {
        self.heads.clear();
        self.arrivals.clear();
        self.ends.clear();
    }

    /// Holds the report `(tp, first, times)` made at `at`, its records counted by `counter`
    /// if given.
    fn push(
        &mut self,
        (at, tp, first): (SimTime, Tp, u64),
        times: &RecordTimes,
        counter: Option<CountLatencies>,
    ) {
        let RecordTimes::Listed { arrivals, ends } = times else {
            unreachable!("a folded report lists its records")
        };
        self.arrivals.extend_from_slice(arrivals);
        self.ends.extend_from_slice(ends);
        let max_us = counter.map_or(0, |count| count(&mut self.counted, arrivals, ends));
        self.heads.push(ReportHead { at, tp, first, records: arrivals.len(), max_us });
    }
}

/// The logs of one member's partitions, lent to its catch-up on another thread: a
/// [`LogView`](crate::consumer::LogView) of those partitions only.
struct LentLogs<'a> {
    tps: Vec<Tp>,
    logs: Vec<&'a mut PartitionLog>,
}

impl LogsByPartition for LentLogs<'_> {
    /// A member holds a few partitions: a look at each is a search.
    #[inline]
    fn log(&mut self, tp: Tp) -> &mut PartitionLog {
        let i = self.tps.iter().position(|t| *t == tp).expect("a partition of the member");
        self.logs[i]
    }
    /// The logs are lent in partition order, the member's own order of its partitions
    /// ([`Logs::lend`]): the `place`-th is there.
    #[inline]
    fn log_at(&mut self, tp: Tp, place: usize) -> &mut PartitionLog {
        debug_assert_eq!(self.tps[place], tp, "the lent logs follow the member's places");
        self.logs[place]
    }
}

impl Logs {
    /// The log end offsets at `at` of the partitions `borrower` marks [`NO_BORROWER`],
    /// summed (a topic with a shared log counts its log end once per partition).
    pub(in crate::world) fn log_end_sum_unlent(
        &mut self,
        at: SimTime,
        borrower: &[Vec<u32>],
    ) -> u64 {
        self.sum_by_topic(at, |topic, logs| {
            let unlent = logs.iter_mut().zip(&borrower[topic]).filter(|(_, &m)| m == NO_BORROWER);
            unlent.map(|(log, _)| log.log_end(at)).sum()
        })
    }

    /// Whether the logs of `tps` may be lent: none is its topic's shared log.
    fn may_lend(&self, mut tps: impl Iterator<Item = Tp>) -> bool {
        tps.all(|tp| self.shared[tp.topic as usize].is_none())
    }

    /// Lends each partition's log to the member `borrower` names (by index, in `lent`), in
    /// partition order: each member's logs in the order of its partitions.
    fn lend<'a>(&'a mut self, borrower: &[Vec<u32>], lent: &mut [LentLogs<'a>]) {
        for (topic, (logs, borrowers)) in self.logs.iter_mut().zip(borrower).enumerate() {
            for (partition, (log, &who)) in logs.iter_mut().zip(borrowers).enumerate() {
                if who != NO_BORROWER {
                    let tp = Tp { topic: topic as u32, partition: partition as u32 };
                    lent[who as usize].tps.push(tp);
                    lent[who as usize].logs.push(log);
                }
            }
        }
    }
}

/// No member borrows the log.
const NO_BORROWER: u32 = u32::MAX;

/// One member's catch-up, on whichever thread runs its piece.
struct MemberCatchUp<'a> {
    member: AsideMember<'a>,
    logs: LentLogs<'a>,
    bound: Bound,
    /// Whether it catches up for a sample (or the end): its logs are then drawn ahead and
    /// their log ends summed once it has caught up.
    at_sample: bool,
    /// The next sample, if any: the member's logs are drawn past it once caught up, so that
    /// its catch-ups between the two samples (on the calling thread) find them drawn.
    draw_past: Option<SimTime>,
    /// Its partitions' log end offsets at `bound.until`, summed once caught up.
    log_end_sum: u64,
    /// The member's partitions (the fold's places).
    owned: usize,
    /// Whether any step ran.
    ran: bool,
    /// Its reports among its piece's, and the index of its first record there.
    reports: Range<usize>,
    first_record: usize,
}

impl MemberCatchUp<'_> {
    /// [`World::run_quiet_steps`]'s folded catch-up, its reports held in `piece` (their
    /// records counted by `counter`, if given).
    fn run(&mut self, piece: &mut Piece, counter: Option<CountLatencies>) {
        let Piece { folded, reports } = piece;
        let start = reports.heads.len();
        self.first_record = reports.arrivals.len();
        folded.begin(self.owned);
        while let Some(at) =
            run_folded_steps(&mut self.member, &mut self.logs, folded, self.bound, None)
        {
            self.ran = true;
            folded.drain(|tp, first, times| reports.push((at, tp, first), times, counter));
        }
        self.reports = start..reports.heads.len();
        if self.at_sample {
            self.draw_ahead_and_sum_log_ends();
        }
    }

    /// Draws each of the member's logs past [`MemberCatchUp::draw_past`] (each partition's
    /// arrivals are drawn from its own stream: drawing them here, sooner, changes no value)
    /// and sums their log ends now.
    fn draw_ahead_and_sum_log_ends(&mut self) {
        let now = self.bound.until;
        for log in &mut self.logs.logs {
            if let Some(next) = self.draw_past {
                log.log_end(next);
            }
            self.log_end_sum += log.log_end(now);
        }
    }
}

/// What a member's catch-up left for the calling thread: its slot, its piece, whether any
/// step ran, its reports among its piece's and the index of its first record there.
struct Outcome {
    slot: usize,
    piece: usize,
    ran: bool,
    reports: Range<usize>,
    first_record: usize,
    log_end_sum: u64,
}

impl World<'_, Fast> {
    /// Every member with aside steps catches up to `now` as [`World::catch_up`] would, on
    /// the run's threads; false (nothing done) when they must run one after the other.
    /// `at_sample`: for a sample or the end (not before one member's catch-up): each
    /// member's logs are then drawn ahead and their log ends summed for the sample.
    pub(in crate::world) fn catch_up_all_shared_out(
        &mut self,
        now: SimTime,
        at_sample: bool,
    ) -> bool {
        self.stepper.shared_out.lent_log_ends = None;
        self.stepper.shared_out.last_try = Some(now);
        let Some(threads) = self.stepper.shared_out.pool.as_ref().map(|p| p.current_num_threads())
        else {
            return false;
        };
        if self.stepper.periodic {
            return false;
        }
        let due: Vec<usize> =
            (0..self.slots.len()).filter(|&s| self.stepper.slots[s].lazy.is_some()).collect();
        if due.len() < self.stepper.shared_out.min_members.max(2)
            || !due.iter().all(|&slot| self.may_catch_up_apart(slot))
        {
            return false;
        }
        let mut shared = std::mem::take(&mut self.stepper.shared_out);
        if !self.mark_borrowers(&due, &mut shared.borrower) {
            self.stepper.shared_out = shared;
            return false;
        }
        let pieces = due.len().min(threads * PIECES_PER_THREAD);
        let per_piece = due.len().div_ceil(pieces);
        let used = due.len().div_ceil(per_piece);
        if shared.pieces.len() < used {
            // Never fewer: a piece keeps its counts until the end of the run.
            shared.pieces.resize_with(used, Piece::default);
        }
        let counter = self.observer.latency_counter();
        let outcomes = self.run_apart((now, at_sample, counter), &due, &mut shared, per_piece);
        shared.times += 1;
        let lent_log_ends = outcomes.iter().map(|o| o.log_end_sum).sum();
        shared.lent_log_ends = at_sample.then_some((now, lent_log_ends));
        for outcome in outcomes {
            self.give_held(&outcome, &mut shared.pieces[outcome.piece].reports, counter);
        }
        self.stepper.shared_out = shared;
        true
    }

    /// Gives the observer the latencies its pieces counted ahead, every round's at once (a
    /// count per class is a sum): at the end of the run, after its last catch-ups. Adding a
    /// round's counts at the round cost the calling thread a pass over every class counted
    /// (thousands) a piece, at every round, while both threads waited on it.
    pub(in crate::world) fn give_counted_latencies(&mut self) {
        for piece in &mut self.stepper.shared_out.pieces {
            self.observer.observe_counted_latencies(&mut piece.reports.counted);
        }
    }

    /// Before a member catches up at `now` for an input that changes something (a rebalance's
    /// heartbeat response, join or sync response, assignment): if the last shared-out
    /// catch-ups (or the last try) are at least [`SHARE_OUT_AFTER`] behind, every member with
    /// aside steps catches up to `now` on the run's threads first, as before a sample, but
    /// without drawing ahead or summing log ends. A rebalance reaches each member at its own
    /// instant, and without this each would catch up since the last sample one member at a
    /// time on the calling thread. Which steps run is the same: any member's steps that come
    /// before the event being handled may run before it. (Heartbeat responses that change
    /// nothing keep their wake-up with the member's steps where it can wait,
    /// [`World::defer_wake`]; the others, and auto-commit wake-ups, still catch up one member:
    /// sharing out at every such one, every 100 ms, cost a steady run more than it gained.)
    pub(in crate::world) fn share_out_before_catch_up(&mut self, now: SimTime) {
        let shared = &self.stepper.shared_out;
        if shared.pool.is_none() || shared.last_try.is_some_and(|t| now < t + SHARE_OUT_AFTER) {
            return;
        }
        self.catch_up_all_shared_out(now, false);
    }

    /// Marks in `borrower` the partitions of the members of `due` (by index there); the
    /// others, [`NO_BORROWER`]. False if two of them hold one partition (a member that has
    /// not learnt yet that it lost it): their catch-ups read one log.
    fn mark_borrowers(&self, due: &[usize], borrower: &mut Vec<Vec<u32>>) -> bool {
        borrower.resize_with(self.logs.logs.len(), Vec::new);
        for (marks, logs) in borrower.iter_mut().zip(&self.logs.logs) {
            marks.clear();
            marks.resize(logs.len(), NO_BORROWER);
        }
        for (index, &slot) in due.iter().enumerate() {
            let consumer = self.slots[slot].consumer.as_ref().expect("a member catching up");
            for tp in consumer.owned_partitions() {
                let mark = &mut borrower[tp.topic as usize][tp.partition as usize];
                if *mark != NO_BORROWER {
                    return false;
                }
                *mark = index as u32;
            }
        }
        true
    }

    /// Whether `slot`'s catch-up may run apart: its member lists its records' times, folds
    /// its reports, and reads no shared log.
    fn may_catch_up_apart(&self, slot: usize) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        debug_assert!(self.stepper.slots[slot].cycles.is_empty(), "no cycle in a stochastic run");
        consumer.lists_records()
            && self.may_fold_reports(slot).is_some()
            && self.logs.may_lend(consumer.owned_partitions())
    }

    /// Runs the catch-ups of `due` (in slot order) to `now` (`at_sample`: for a sample) in
    /// pieces of `per_piece` members on the run's threads, their reports' records counted per
    /// `counter` if given; gives what each left, in slot order.
    fn run_apart(
        &mut self,
        (now, at_sample, counter): (SimTime, bool, Option<CountLatencies>),
        due: &[usize],
        shared: &mut SharedOut,
        per_piece: usize,
    ) -> Vec<Outcome> {
        let next_sample = now + self.sample_every;
        let draw_past = (next_sample <= self.end).then_some(next_sample);
        let World { slots, stepper, logs, .. } = self;
        let Fast { slots: stepper_slots, current_rank, .. } = stepper;
        let mut lent: Vec<LentLogs> =
            due.iter().map(|_| LentLogs { tps: Vec::new(), logs: Vec::new() }).collect();
        logs.lend(&shared.borrower, &mut lent);
        let mut lent = lent.into_iter();
        let mut next_due = due.iter().peekable();
        let mut jobs = Vec::with_capacity(due.len());
        for (slot, (s, ss)) in slots.iter_mut().zip(stepper_slots.iter_mut()).enumerate() {
            if next_due.next_if_eq(&&slot).is_none() {
                continue;
            }
            let consumer: &mut Consumer = s.consumer.as_mut().expect("a member catching up");
            let inclusive = (slot as u64) < *current_rank;
            let bound = Bound { until: now, inclusive, loud: consumer.loud_at() };
            let owned = consumer.poll_loop.owned.len();
            let (lazy, wake) = (&mut ss.lazy, &mut ss.deferred_wake);
            let member = AsideMember { consumer, rng: &mut s.rng, lazy, wake };
            let logs = lent.next().expect("logs lent to each member");
            let (ran, reports, first_record, log_end_sum) = (false, 0..0, 0, 0);
            jobs.push(MemberCatchUp {
                member,
                logs,
                bound,
                at_sample,
                draw_past,
                log_end_sum,
                owned,
                ran,
                reports,
                first_record,
            });
        }
        let pool = shared.pool.as_ref().expect("the run's threads");
        let pieces = &mut shared.pieces;
        pool.install(|| {
            let work = jobs.par_chunks_mut(per_piece).zip(pieces.par_iter_mut());
            work.for_each(|(jobs, piece)| {
                piece.reports.clear();
                jobs.iter_mut().for_each(|job| job.run(piece, counter));
            })
        });
        let pieces_of = jobs.iter().enumerate().map(|(i, job)| (i / per_piece, job));
        let outcomes = pieces_of.zip(due).map(|((piece, job), &slot)| Outcome {
            slot,
            piece,
            ran: job.ran,
            reports: job.reports.clone(),
            first_record: job.first_record,
            log_end_sum: job.log_end_sum,
        });
        outcomes.collect()
    }

    /// Gives the reports `outcome`'s member held (their times lent, not copied; counted
    /// ahead when `counter` is given), then, if any of its steps ran, what
    /// [`World::catch_up_until`] does after them.
    fn give_held(
        &mut self,
        outcome: &Outcome,
        held: &mut HeldReports,
        counter: Option<CountLatencies>,
    ) {
        self.check_wake_used(outcome.slot);
        let conn: Conn = self.slots[outcome.slot].consumer.as_ref().expect("a member").conn();
        let mut index = outcome.first_record;
        let HeldReports { heads, arrivals, ends, counted } = held;
        for head in &heads[outcome.reports.clone()] {
            let range = index..index + head.records;
            index += head.records;
            let times = (&arrivals[range.clone()], &ends[range]);
            let report = (head.tp, head.first);
            match counter {
                Some(_) => {
                    self.on_processed_counted(head.at, conn, report, times, (head.max_us, counted))
                }
                None => self.on_processed_listed(head.at, conn, report, times.0, times.1),
            }
        }
        if outcome.ran {
            self.stepper.slots[outcome.slot].forget_cycle_position();
            self.sync_poll_timer(outcome.slot);
        }
    }
}
