//! The consumer without a classic group: its partitions are handed to it from outside (the
//! TubeMQ master, the TubeMQ client-side rule, or `assign()` for manual assignment), and taken
//! away by the TubeMQ master. The poll loop, batches and commits are the consumer's own; only
//! membership is replaced.
//!
//! Lifecycle of a release (TubeMQ, docs/kafka-facts.md section 8): the master's release event
//! stops fetching the partitions at once. A partition with no records in the batch in progress
//! is handed back at once at its position. A partition in the batch in progress waits up to
//! `confirm_wait` (`pullRebConfirmWaitPeriodMs`) for the batch to be confirmed: if the batch
//! ends in time, the partition is handed back after it (the batch's records confirmed); if not,
//! at the deadline it is handed back *rolled back* to the batch's first offset
//! (`lastPackConsumed=false`, `DefaultOffsetManager.commitOffset(isConsumed=false)`): the next
//! owner reads the batch again while this member still finishes processing it.

use crate::consumer::{
    Consumer, ConsumerEnv, ConsumerInput, ConsumerNote, ConsumerOutbox, ConsumerParams,
    ConsumerTimer, LogView, Membership, RevokeCause,
};
use crate::types::Tp;
use sim_core::SimTime;
use std::collections::BTreeSet;

/// A partition being released while its records are in the batch in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Releasing {
    tp: Tp,
    /// Batch poll epoch.
    epoch: u64,
    /// Its first offset in the batch (the rollback point).
    first: u64,
    /// The offset after its last record in the batch (confirmed point).
    end: u64,
    /// When the wait for the confirmation gives up.
    deadline: SimTime,
}

/// The state of a member without a classic group.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExternalState {
    releasing: Vec<Releasing>,
}

impl Consumer {
    /// A member that never joins a classic group: its partitions come from
    /// [`crate::consumer::ConsumerInput::Assign`] and leave by
    /// [`crate::consumer::ConsumerInput::Release`]; its commits go to the group's offsets without a
    /// member id (Kafka accepts such commits for a group with no members; TubeMQ confirms to the
    /// broker).
    pub fn new_external(
        conn: crate::types::Conn,
        name: String,
        params: ConsumerParams,
    ) -> Consumer {
        let mut consumer = Consumer::new(conn, name, params);
        consumer.membership = Membership::Assigned(ExternalState::default());
        consumer.rejoin_needed = false;
        consumer
    }

    /// Whether this member has no classic group.
    pub(crate) fn is_external(&self) -> bool {
        match self.membership {
            Membership::Assigned(_) => true,
            Membership::Classic | Membership::Kip848(_) => false,
        }
    }

    /// The state of a member without a group (`None` for group members).
    #[inline]
    fn assigned_mut(&mut self) -> Option<&mut ExternalState> {
        match &mut self.membership {
            Membership::Assigned(state) => Some(state),
            Membership::Classic | Membership::Kip848(_) => None,
        }
    }

    /// Partitions handed to it, with their stored offsets (`None`: `auto.offset.reset`).
    pub(crate) fn on_external_assign<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        assigned: Vec<(Tp, Option<u64>)>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if self.assigned_mut().is_none() {
            return;
        }
        self.take_new(now, assigned, env, out);
        out.note(ConsumerNote::Assigned { owned: self.owned(), generation: 0, rejoining: false });
        self.wake(now, env, out);
    }

    /// The master takes `tps` away: stop fetching them; hand back those not in the batch in
    /// progress at once, the others after the batch or at `now + confirm_wait`.
    pub(crate) fn on_external_release(
        &mut self,
        now: SimTime,
        tps: Vec<Tp>,
        confirm_wait: SimTime,
        out: &mut ConsumerOutbox,
    ) {
        let Some(ext) = self.assigned_mut() else { return };
        let mut releasing = std::mem::take(&mut ext.releasing);
        let mut at_once = Vec::new();
        let deadline = now + confirm_wait;
        // Removed in one pass after the loop (a member may release thousands).
        let mut released = BTreeSet::new();
        for tp in tps {
            let Some(&position) = self.poll_loop.owned.get(&tp) else { continue };
            if !released.insert(tp) {
                continue; // Named twice: released once, as by a removal.
            }
            match self
                .poll_loop
                .batch
                .as_ref()
                .and_then(|b| b.parts.iter().find(|p| p.0 == tp).map(|p| (b.epoch, *p)))
            {
                Some((epoch, (_, first, count))) => {
                    let end = first + count as u64;
                    releasing.push(Releasing { tp, epoch, first, end, deadline });
                }
                None => at_once.push((tp, position)),
            }
        }
        self.poll_loop.owned.retain(|tp| !released.contains(tp));
        let wait_until = (!releasing.is_empty()).then_some(deadline);
        if let Some(ext) = self.assigned_mut() {
            ext.releasing = releasing;
        }
        hand_back(at_once, wait_until, out);
    }

    /// `confirm_wait` ran out: hand back what is still waiting, rolled back to the batch start.
    pub(crate) fn on_release_timeout(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        let Some(ext) = self.assigned_mut() else { return };
        let (expired, kept): (Vec<Releasing>, Vec<Releasing>) =
            ext.releasing.drain(..).partition(|r| r.deadline <= now);
        ext.releasing = kept;
        let next = ext.releasing.iter().map(|r| r.deadline).min();
        let offsets = expired.iter().map(|r| (r.tp, r.first)).collect();
        hand_back(offsets, next, out);
    }

    /// The batch of `epoch` was processed (and confirmed): hand back its releasing partitions
    /// at their confirmed offsets.
    pub(crate) fn confirm_releases(&mut self, epoch: u64, out: &mut ConsumerOutbox) {
        let Some(ext) = self.assigned_mut() else { return };
        if ext.releasing.is_empty() {
            return;
        }
        let (done, kept): (Vec<Releasing>, Vec<Releasing>) =
            ext.releasing.drain(..).partition(|r| r.epoch == epoch);
        ext.releasing = kept;
        let offsets = done.iter().map(|r| (r.tp, r.end)).collect();
        hand_back(offsets, None, out);
    }

    /// The master no longer knows this member (it missed its heartbeat timeout): everything
    /// it holds is lost without a hand-back; it registers again as a new consumer.
    pub(crate) fn on_external_drop_all(&mut self, out: &mut ConsumerOutbox) {
        let Some(ext) = self.assigned_mut() else { return };
        ext.releasing.clear();
        if self.poll_loop.owned.is_empty() {
            return;
        }
        let tps = self.owned();
        self.poll_loop.owned.clear();
        out.note(ConsumerNote::Lost { tps });
    }
}

/// Notes the hand-back of `offsets` (if any) and the next confirmation deadline.
fn hand_back(offsets: Vec<(Tp, u64)>, wait_until: Option<SimTime>, out: &mut ConsumerOutbox) {
    if offsets.is_empty() && wait_until.is_none() {
        return;
    }
    if !offsets.is_empty() {
        let tps = offsets.iter().map(|(tp, _)| *tp).collect();
        out.note(ConsumerNote::Revoked { tps, cause: RevokeCause::Revoked });
    }
    out.note(ConsumerNote::Released { offsets, wait_until });
}

/// What fast stepping (`world/stepper`) needs to know of a member without a group.
impl Consumer {
    /// Never plain: its partitions come and go by inputs that are not messages (`Assign`,
    /// `Release`), so its steps stay in the queue.
    pub(crate) fn assigned_poll_loop_is_plain(&self) -> bool {
        false
    }

    /// The heartbeat timer leaves the poll loop alone (it does nothing without a group).
    pub(crate) fn assigned_input_leaves_poll_loop_alone(input: &ConsumerInput) -> bool {
        matches!(input, ConsumerInput::Timer(ConsumerTimer::Heartbeat))
    }

    /// No response of a coordinator can change nothing: it has none.
    pub(crate) fn assigned_response_changes_nothing(_: &ConsumerInput) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumer::{ConsumerInput, ConsumerParams, ConsumerTimer, RebalanceMode};
    use crate::processing::ProcessingSampler;
    use crate::types::Conn;
    use assignors::{AssignorName, Topic};
    use scenario::{Client, CommitPolicy, OffsetReset};
    use sim_core::{RngStreams, SimRng};

    use crate::consumer::tests::{t, tp, TenMs};

    struct Rig {
        consumer: Consumer,
        rng: SimRng,
        assignor_rng: SimRng,
        topics: Vec<Topic>,
    }

    impl Rig {
        /// A TubeMQ-like member: 1 ms per record, confirms every batch; owns t-0 and t-1
        /// (stored offset 0) from 0 ms. Its first batch is polled at 11 ms (offset 0 of both
        /// partitions arrived at 10 ms, visible 1 ms later) and ends at 13 ms.
        fn new() -> Rig {
            let params = ConsumerParams {
                mode: RebalanceMode::Eager,
                assignor: AssignorName::Modulo,
                client: Client::Java,
                commit: CommitPolicy::SyncPerBatch,
                enable_auto_commit: true,
                auto_commit_interval: t(5000),
                session_timeout: t(10_000),
                heartbeat_interval: t(3000),
                max_poll_interval: t(300_000),
                max_poll_records: 500,
                fetch_max_wait: t(500),
                offset_reset: OffsetReset::Earliest,
                one_way: t(1),
                processing: ProcessingSampler::Constant(t(1)),
                static_membership: false,
                metadata_refresh: t(300_000),
                rebalance_listener: true,
                shared_client_id: None,
            };
            let streams = RngStreams::new(1);
            let conn = Conn { slot: 0, incarnation: 1 };
            let mut rig = Rig {
                consumer: Consumer::new_external(conn, "c0".into(), params),
                rng: streams.indexed("member", 0),
                assignor_rng: streams.stream("assignor"),
                topics: vec![Topic { name: "t".into(), partitions: 2 }],
            };
            rig.step(0, ConsumerInput::Start);
            rig.step(0, ConsumerInput::Assign(vec![(tp(0), Some(0)), (tp(1), Some(0))]));
            let out = rig.step(11, ConsumerInput::Timer(ConsumerTimer::PollWake { epoch: 2 }));
            assert!(out.timers.contains(&(ConsumerTimer::BatchDone { epoch: 3 }, Some(t(13)))));
            rig
        }

        fn step(&mut self, ms: u64, input: ConsumerInput) -> ConsumerOutbox {
            let mut log = TenMs;
            let mut env = ConsumerEnv {
                log: &mut log,
                rng: &mut self.rng,
                assignor_rng: &mut self.assignor_rng,
                topics: &self.topics,
            };
            let mut out = ConsumerOutbox::default();
            self.consumer.handle(t(ms), input, &mut env, &mut out);
            out
        }
    }

    fn released(out: &ConsumerOutbox) -> Vec<&ConsumerNote> {
        out.notes.iter().filter(|n| matches!(n, ConsumerNote::Released { .. })).collect()
    }

    fn release(tps: Vec<Tp>) -> ConsumerInput {
        ConsumerInput::Release { tps, confirm_wait: t(3000) }
    }

    #[test]
    fn a_release_during_the_batch_waits_for_its_confirmation() {
        let mut rig = Rig::new();
        // At 12 ms t-1's record 0 is in the batch: hand-back waits (until at most 3.012 s).
        let out = rig.step(12, release(vec![tp(1)]));
        let wait = ConsumerNote::Released { offsets: vec![], wait_until: Some(t(3012)) };
        assert_eq!(released(&out), [&wait]);
        assert_eq!(rig.consumer.owned(), vec![tp(0)]);
        // The batch ends at 13 ms: t-1 is handed back confirmed at 1; the batch's commit
        // carries only t-0.
        let out = rig.step(13, ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 3 }));
        let done = ConsumerNote::Released { offsets: vec![(tp(1), 1)], wait_until: None };
        assert_eq!(released(&out), [&done]);
        assert!(matches!(
            out.sends.as_slice(),
            [crate::types::ToCoordinator::Commit { offsets, member_id: None, .. }]
                if offsets == &vec![(tp(0), 1)]
        ));
    }

    #[test]
    fn an_unconfirmed_batch_is_rolled_back_at_the_deadline() {
        let mut rig = Rig::new();
        // A 10 s stall at 12 ms: the batch now ends at 10.013 s, after the 3 s wait.
        rig.step(12, ConsumerInput::Stall(t(10_000)));
        rig.step(12, release(vec![tp(1)]));
        let out = rig.step(3012, ConsumerInput::ReleaseTimeout);
        // Rolled back to the batch's first offset of t-1: 0 (the next owner reads it again).
        let rolled = ConsumerNote::Released { offsets: vec![(tp(1), 0)], wait_until: None };
        assert_eq!(released(&out), [&rolled]);
        assert!(out
            .notes
            .contains(&ConsumerNote::Revoked { tps: vec![tp(1)], cause: RevokeCause::Revoked }));
        // The batch still finishes and reports t-1's record processed, but hands back nothing.
        let out = rig.step(10_013, ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 3 }));
        assert!(released(&out).is_empty());
        assert!(out
            .notes
            .iter()
            .any(|n| matches!(n, ConsumerNote::Processed { tp: p, first: 0, .. } if *p == tp(1))));
    }

    #[test]
    fn a_partition_outside_the_batch_is_handed_back_at_once() {
        let mut rig = Rig::new();
        rig.step(13, ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 3 }));
        // Between batches (awaiting the confirmation): t-0 goes back at its position, 1.
        let out = rig.step(14, release(vec![tp(0)]));
        let now = ConsumerNote::Released { offsets: vec![(tp(0), 1)], wait_until: None };
        assert_eq!(released(&out), [&now]);
        // DropAll: the master forgot the member; t-1 is lost without a hand-back.
        let out = rig.step(15, ConsumerInput::DropAll);
        assert_eq!(out.notes, vec![ConsumerNote::Lost { tps: vec![tp(1)] }]);
        assert!(rig.consumer.owned().is_empty());
    }
}
