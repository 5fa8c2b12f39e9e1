//! The stepper: how the world steps the members' poll loops, behind one seam, the [`Stepper`]
//! trait. The world calls its hooks at the few points where a member's pending poll-loop
//! steps matter (an event begins, an input reaches a member or was handled, a wake-up, a
//! pause, a crash, a partition changes, a sample, the end) and does nothing else for stepping.
//! [`Plain`] is the trivial implementation: every step is a queued event, so every hook does
//! nothing. [`Fast`] keeps a steady member's quiet steps aside and runs them on demand
//! ([`lazy`]), jumping along the cycles it finds in them ([`cycle`]).
//!
//! Fast stepping's state lives here, not in the world's member slots: what it knows of the
//! logs (whether steps may repeat, each partition's exact arrival spacing), the rank of the
//! event being handled, and per member slot a [`StepperSlot`]: the step kept aside, its
//! wake-up timer, the member's cycles and where it stands on them. What it asks of a member's
//! protocol (is its poll loop plain now, does an input leave it alone, does a response change
//! nothing) are required methods each protocol answers in its own `member.rs`
//! (`crate::protocols`), and a jump writes only the member's `PollLoop`.

mod cycle;
mod fold;
mod lazy;
mod parallel;
mod plain;

pub(in crate::world) use lazy::is_poll_step;
pub use parallel::CatchUpThreads;
pub(in crate::world) use plain::Plain;

use crate::consumer::ConsumerInput;
use crate::types::Conn;
use crate::world::{Ev, World};
use sim_core::{SimTime, TimerId, RANK_LAST};

/// How the world steps the members' poll loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stepping {
    /// Quiet poll-loop steps run outside the queue, on demand (same results, fewer events).
    #[default]
    Fast,
    /// Every step is a queued event (the reference the fast mode is tested against).
    Plain,
}

/// How the world steps its members' poll loops, seen from the world: its bookkeeping (slots,
/// partitions, incarnations) and the hooks the world calls where pending steps matter. Each
/// hook takes the world: a stepper runs members' steps through it.
pub(crate) trait Stepper: Sized {
    /// The stepper of a run over `topics` topics without partitions yet; `periodic`: every
    /// topic has constant arrivals and processing is constant.
    fn new(periodic: bool, topics: usize) -> Self;
    /// A new member slot, whose aside steps wake up by timer `wake`.
    fn add_slot(&mut self, wake: TimerId);
    /// The next partition of `topic` has this exact arrival spacing
    /// (`PartitionLog::exact_spacing`).
    fn add_partition(&mut self, topic: usize, spacing: Option<(SimTime, u64)>);
    /// A new incarnation starts in `slot`.
    fn restart(&mut self, slot: usize);

    /// The event `ev` is about to be handled.
    fn before_event(world: &mut World<'_, Self>, ev: &Ev);
    /// `input` is about to reach the member in `slot` at `now`. True: it is not delivered
    /// (it changes nothing, or its wake-up waits with the member's aside steps). False: the
    /// member's steps that come before it have run.
    fn before_input(
        world: &mut World<'_, Self>,
        slot: usize,
        now: SimTime,
        input: &ConsumerInput,
    ) -> bool;
    /// The member in `slot` handled an input at `now`.
    fn after_input(world: &mut World<'_, Self>, slot: usize, now: SimTime);
    /// A wake-up of `conn`'s aside steps fired at `now` (`Ev::Wake`).
    fn on_wake(world: &mut World<'_, Self>, now: SimTime, conn: Conn);
    /// The member in `slot` was paused: its steps wait in the queue (held at firing).
    fn on_pause(world: &mut World<'_, Self>, slot: usize);
    /// The member in `slot` crashed (its timers are cancelled).
    fn on_crash(world: &mut World<'_, Self>, slot: usize);
    /// Before a sample at `now`: the records processed by then and not reported yet.
    fn before_sample(world: &mut World<'_, Self>, now: SimTime) -> u64;
    /// At a sample at `now`, after [`Stepper::before_sample`]: every partition's log end
    /// offset, summed.
    fn produced(world: &mut World<'_, Self>, now: SimTime) -> u64 {
        world.logs.log_end_sum(now)
    }
    /// Before the end of the run at `now`: every step due by then has run.
    fn before_end(world: &mut World<'_, Self>, now: SimTime);
    /// Runs the steps of `owner` that come before the event being handled at `now` (the
    /// ownership books, before a partition of `owner` changes: `crate::ownership`).
    fn catch_up_owner(world: &mut World<'_, Self>, owner: Conn, now: SimTime);
    /// Whether `owner` still has steps that come before the event being handled at `now`.
    fn behind(world: &World<'_, Self>, owner: Conn, now: SimTime) -> bool;
    /// How many times the members' catch-ups were shared out over threads.
    fn shared_catch_ups(world: &World<'_, Self>) -> u64;
    /// How many wake-ups were kept with members' aside steps (`World::defer_wake`).
    fn deferred_wakes(world: &World<'_, Self>) -> u64;
}

/// Fast stepping's state.
pub(in crate::world) struct Fast {
    /// Every topic has constant arrivals and processing is constant: aside steps may repeat
    /// exactly, and cycles are looked for.
    periodic: bool,
    /// Per topic and partition: `PartitionLog::exact_spacing`.
    spacings: Vec<Vec<Option<(SimTime, u64)>>>,
    /// The queue rank of the event being handled (`lazy::rank_of`).
    current_rank: u64,
    /// The buffer of a signature computed for a lookup (`World::locate`).
    signature_scratch: Vec<i64>,
    /// Per member slot (the world's slot indexes).
    slots: Vec<StepperSlot>,
    /// The reports of the catch-up in progress, held per partition (`fold.rs`).
    folded: fold::FoldedReports,
    /// The buffers of catch-ups shared out over the run's threads (`parallel.rs`).
    shared_out: parallel::SharedOut,
    /// Wake-ups kept with members' aside steps so far (`World::defer_wake`).
    deferred_wakes: u64,
}

/// The stepper's state of one member slot.
struct StepperSlot {
    /// The pending poll-loop step kept out of the queue (fast stepping).
    lazy: Option<lazy::LazyStep>,
    /// A wake-up of the member's poll received while its steps were aside, due once the
    /// steps it admits have run (`lazy.rs`, [`World::defer_wake`]).
    deferred_wake: Option<cycle::Bound>,
    /// The wake-up timer of the member's aside steps.
    wake: TimerId,
    /// Known cycles of the member's aside steps (`cycle.rs`).
    cycles: Vec<cycle::Cycle>,
    /// Where the member stands on one of them, if known (`cycle.rs`).
    on_cycle: Option<cycle::OnCycle>,
    /// The pending step at which a lookup found the member on none of them (valid like
    /// `on_cycle`: until its steps run, it is taken back, or a cycle is added).
    off_cycle: Option<lazy::LazyStep>,
    /// The position the member had when its pending step went back to the queue: checked
    /// when it goes aside again (`World::resume_position`), which spares a lookup.
    resume_hint: Option<cycle::OnCycle>,
    /// When its catch-ups may record its steps again (`lazy.rs`).
    record_backoff: lazy::RecordBackoff,
}

impl StepperSlot {
    /// Forgets where the member stands on its cycles (its state or its cycles changed).
    fn forget_cycle_position(&mut self) {
        self.on_cycle = None;
        self.off_cycle = None;
        self.resume_hint = None;
    }
}

impl Fast {
    /// The wake-up timer of `slot`'s aside steps.
    fn wake_timer(&self, slot: usize) -> TimerId {
        self.slots[slot].wake
    }
}

impl Stepper for Fast {
    fn new(periodic: bool, topics: usize) -> Fast {
        Fast {
            periodic,
            spacings: vec![Vec::new(); topics],
            current_rank: RANK_LAST,
            signature_scratch: Vec::new(),
            slots: Vec::new(),
            folded: fold::FoldedReports::default(),
            shared_out: parallel::SharedOut::default(),
            deferred_wakes: 0,
        }
    }

    fn add_slot(&mut self, wake: TimerId) {
        self.slots.push(StepperSlot {
            lazy: None,
            deferred_wake: None,
            wake,
            cycles: Vec::new(),
            on_cycle: None,
            off_cycle: None,
            resume_hint: None,
            record_backoff: lazy::RecordBackoff::default(),
        });
    }

    fn add_partition(&mut self, topic: usize, spacing: Option<(SimTime, u64)>) {
        self.spacings[topic].push(spacing);
    }

    /// Its predecessor's cycles and backoff are forgotten.
    fn restart(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.cycles.clear();
        s.record_backoff = lazy::RecordBackoff::default();
        s.forget_cycle_position();
        debug_assert!(s.deferred_wake.is_none(), "a wake-up left by slot {slot}'s last member");
        s.deferred_wake = None;
    }

    /// The event's rank in its instant (`lazy::rank_of`).
    fn before_event(world: &mut World<'_, Fast>, ev: &Ev) {
        world.stepper.current_rank = lazy::rank_of(ev);
    }

    fn before_input(
        world: &mut World<'_, Fast>,
        slot: usize,
        now: SimTime,
        input: &ConsumerInput,
    ) -> bool {
        if world.defer_wake(slot, now, input) || world.changes_nothing(slot, now, input) {
            return true;
        }
        world.touch_for(slot, now, input);
        false
    }

    fn after_input(world: &mut World<'_, Fast>, slot: usize, now: SimTime) {
        world.set_aside(slot, now);
    }

    fn on_wake(world: &mut World<'_, Fast>, now: SimTime, conn: Conn) {
        world.on_wake(now, conn);
    }

    fn on_pause(world: &mut World<'_, Fast>, slot: usize) {
        world.take_back(slot);
    }

    /// Its wake-up goes (its steps went with the crash's input).
    fn on_crash(world: &mut World<'_, Fast>, slot: usize) {
        let wake = world.stepper.wake_timer(slot);
        world.queue.cancel(wake);
    }

    /// The records of steady members on a known cycle are counted, every other member with
    /// aside steps catches up.
    fn before_sample(world: &mut World<'_, Fast>, now: SimTime) -> u64 {
        world.count_or_catch_up_all(now)
    }

    /// The log ends of the partitions whose members' catch-ups were just shared out were
    /// summed on the run's threads: the others' are added here.
    fn produced(world: &mut World<'_, Fast>, now: SimTime) -> u64 {
        let Some(lent) = world.stepper.shared_out.take_lent_log_ends(now) else {
            return world.logs.log_end_sum(now);
        };
        let produced =
            lent + world.logs.log_end_sum_unlent(now, world.stepper.shared_out.borrowers());
        debug_assert_eq!(produced, world.logs.log_end_sum(now), "lent and unlent log ends");
        produced
    }

    fn before_end(world: &mut World<'_, Fast>, now: SimTime) {
        world.stepper.current_rank = RANK_LAST;
        world.catch_up_all(now);
        world.give_counted_latencies();
    }

    fn catch_up_owner(world: &mut World<'_, Fast>, owner: Conn, now: SimTime) {
        world.catch_up_conn(owner, now);
    }

    fn behind(world: &World<'_, Fast>, owner: Conn, now: SimTime) -> bool {
        world.conn_behind(owner, now)
    }

    fn shared_catch_ups(world: &World<'_, Fast>) -> u64 {
        world.stepper.shared_out.times()
    }

    fn deferred_wakes(world: &World<'_, Fast>) -> u64 {
        world.stepper.deferred_wakes
    }
}

impl Fast {
    /// Shares the catch-ups before each sample out as `threads` says (`parallel.rs`).
    pub(in crate::world) fn share_out_over(&mut self, threads: CatchUpThreads) {
        self.shared_out.start_threads(threads);
    }
}
