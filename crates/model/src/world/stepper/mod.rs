//! The stepper: how the world steps the members' poll loops. Plain stepping queues every step;
//! fast stepping keeps a steady member's quiet steps aside and runs them on demand
//! ([`lazy`]), jumping along the cycles it finds in them ([`cycle`]).
//!
//! Its state lives here, not in the world's member slots: the mode, what it knows of the
//! logs (whether steps may repeat, each partition's exact arrival spacing), the rank of the
//! event being handled, and per member slot a [`StepperSlot`]: the step kept aside, its
//! wake-up timer, the member's cycles and where it stands on them.

mod cycle;
mod lazy;

pub use lazy::Stepping;
pub(in crate::world) use lazy::{is_poll_step, rank_of};

use sim_core::{SimTime, TimerId, RANK_LAST};

/// The stepper's state.
pub(in crate::world) struct Stepper {
    /// Plain or fast.
    pub(in crate::world) stepping: Stepping,
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
}

/// The stepper's state of one member slot.
struct StepperSlot {
    /// The pending poll-loop step kept out of the queue (fast stepping).
    lazy: Option<lazy::LazyStep>,
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

impl Stepper {
    /// Fast stepping over `topics` topics without partitions yet; `periodic`: every topic has
    /// constant arrivals and processing is constant.
    pub(in crate::world) fn new(periodic: bool, topics: usize) -> Stepper {
        Stepper {
            stepping: Stepping::Fast,
            periodic,
            spacings: vec![Vec::new(); topics],
            current_rank: RANK_LAST,
            signature_scratch: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// A new member slot, whose aside steps wake up by timer `wake`.
    pub(in crate::world) fn add_slot(&mut self, wake: TimerId) {
        self.slots.push(StepperSlot {
            lazy: None,
            wake,
            cycles: Vec::new(),
            on_cycle: None,
            off_cycle: None,
            resume_hint: None,
            record_backoff: lazy::RecordBackoff::default(),
        });
    }

    /// The next partition of `topic` has this exact arrival spacing
    /// (`PartitionLog::exact_spacing`).
    pub(in crate::world) fn add_partition(
        &mut self,
        topic: usize,
        spacing: Option<(SimTime, u64)>,
    ) {
        self.spacings[topic].push(spacing);
    }

    /// A new incarnation starts in `slot`: its predecessor's cycles and backoff are forgotten.
    pub(in crate::world) fn restart(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.cycles.clear();
        s.record_backoff = lazy::RecordBackoff::default();
        s.forget_cycle_position();
    }

    /// The wake-up timer of `slot`'s aside steps.
    pub(in crate::world) fn wake_timer(&self, slot: usize) -> TimerId {
        self.slots[slot].wake
    }

    /// The event about to be handled ranks `rank` in its instant (`rank_of`).
    pub(in crate::world) fn set_current_rank(&mut self, rank: u64) {
        self.current_rank = rank;
    }
}
