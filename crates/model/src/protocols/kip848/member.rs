//! The member side of the KIP-848 consumer protocol (`group.protocol = consumer`; AK
//! `ConsumerMembershipManager` / `HeartbeatRequestManager`, docs/kafka-facts.md sections 5
//! and 10). The poll loop, batches and commits are the consumer's own; only membership
//! differs from the classic protocol.
//!
//! Lifecycle: the first poll sends a ConsumerGroupHeartbeat with epoch 0 (join); every
//! response carries the member's epoch and the partitions it may own now. A reconciliation
//! revokes the partitions no longer assigned (auto-commit first, with the old epoch), starts
//! the new ones at their committed offsets, and acknowledges any such change by an immediate
//! heartbeat reporting the owned partitions (AK state ACKNOWLEDGING, for revocations and
//! additions alike). Where it runs: a Java member with a rebalance listener (`[consumer]
//! rebalance_listener`, the default) completes it at its next poll, because AK runs the
//! listener's callbacks in the application thread and finishes the reconciliation after them
//! (`Kip848State::waiting`, docs/clients.md); without a listener, and for librdkafka (the
//! real stall-join record: its join completes while the member stalls), at once, in the
//! background. The member epoch is taken at once either way. Heartbeats follow
//! every `group.consumer.heartbeat.interval.ms` (sent by the broker in the response) from
//! the last one sent. FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID drop the partitions
//! (onPartitionsLost) and rejoin with epoch 0.
//!
//! `max.poll.interval.ms`: Java leaves at once (epoch -1, or -2 when static) and rejoins at
//! its next poll; librdkafka 2.16 stops heartbeating and sends its leave only when the
//! application polls again (docs/kafka-facts.md section 10). Close sends the leave (epoch -1,
//! static -2: the coordinator keeps the assignment for the session timeout).

use crate::consumer::{
    Consumer, ConsumerEnv, ConsumerInput, ConsumerNote, ConsumerOutbox, ConsumerTimer, LogView,
    Membership, Phase,
};
use crate::types::{
    CgHeartbeat, CgHeartbeatOk, LeaveReason, ProtocolError, ToCoordinator, ToMember, Tp,
    LEAVE_EPOCH, STATIC_LEAVE_EPOCH,
};
use scenario::Client;
use sim_core::SimTime;
use std::collections::BTreeSet;

/// A member's KIP-848 client state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kip848State {
    /// A join (epoch 0) is in flight.
    pub(crate) joining: bool,
    /// `group.consumer.heartbeat.interval.ms`, once the broker sent it.
    interval: Option<SimTime>,
    /// librdkafka: the poll timer expired; heartbeats stop until the next poll.
    pub(crate) poll_expired: bool,
    /// No join is sent before this time (a lost join is resent after the request timeout;
    /// UNRELEASED_INSTANCE_ID is retried after a backoff).
    retry_at: SimTime,
    /// The member id given up last (a leave, a fence, a lost join): a response still carrying
    /// it answers a heartbeat of that old membership (`Consumer::answers_current_membership`).
    dropped_id: Option<String>,
    /// The latest response whose assignment a Java member with a rebalance listener applies
    /// at its next poll ([`Consumer::reconciles_in_poll`]); a later response replaces it.
    pub(crate) waiting: Option<CgHeartbeatOk>,
}

/// `request.timeout.ms` (Java default): a join whose response was lost is sent again.
const REQUEST_TIMEOUT: SimTime = SimTime::from_secs(30);

/// Backoff before a static member retries a join refused with UNRELEASED_INSTANCE_ID (AK
/// treats the error as fatal; the model keeps trying so that the run can go on).
const UNRELEASED_BACKOFF: SimTime = SimTime::from_secs(1);

impl Consumer {
    /// The KIP-848 client state (only KIP-848 members run this file's code).
    fn kip848_mut(&mut self) -> &mut Kip848State {
        match &mut self.membership {
            Membership::Kip848(state) => state,
            Membership::Classic | Membership::Assigned(_) => unreachable!("a KIP-848 member"),
        }
    }

    /// At poll: complete a reconciliation that waited for it; (re)join when not a member
    /// (start, after a leave or a fence).
    pub(crate) fn kip848_poll<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        // AK `AsyncKafkaConsumer.poll` -> `processBackgroundEvents`: the application thread
        // runs the `ConsumerRebalanceListenerCallbackNeededEvent`s the reconciliation enqueued
        // (`ConsumerMembershipManager.enqueueConsumerRebalanceListenerCallback`), which lets
        // `AbstractMembershipManager.revokeAndAssign` complete.
        if let Some(ok) = self.kip848_mut().waiting.take() {
            self.apply_reconciliation(now, ok, env, out);
        }
        if self.kip848_mut().poll_expired {
            self.kip848_mut().poll_expired = false;
            self.send_leave(LeaveReason::MaxPollExpired, out);
            self.drop_membership(out);
        }
        let due = !self.kip848_mut().joining || now >= self.kip848_mut().retry_at;
        if self.member_id.is_none()
            && due
            && now >= self.kip848_mut().retry_at
            && !self.disconnected
        {
            self.send_cg_join(now, out);
        }
    }

    /// The heartbeat timer fired.
    pub(crate) fn kip848_heartbeat_timer(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        if self.member_id.is_none() || self.kip848_mut().poll_expired {
            return;
        }
        self.send_cg(now, self.generation, None, None, out);
    }

    /// `max.poll.interval.ms` expired.
    pub(crate) fn kip848_poll_timeout(&mut self, out: &mut ConsumerOutbox) {
        if self.member_id.is_none() {
            return;
        }
        out.note(ConsumerNote::MaxPollExpired);
        if self.params.client == Client::Librdkafka {
            self.kip848_mut().poll_expired = true;
            out.cancel(ConsumerTimer::Heartbeat);
            return;
        }
        self.send_leave(LeaveReason::MaxPollExpired, out);
        self.drop_membership(out);
    }

    /// Graceful close: the leave heartbeat (the caller committed and revoked).
    pub(crate) fn kip848_close(&mut self, out: &mut ConsumerOutbox) {
        if self.member_id.is_some() {
            self.send_leave(LeaveReason::Close, out);
        }
    }

    /// A ConsumerGroupHeartbeat response.
    pub(crate) fn kip848_response<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        response: Result<CgHeartbeatOk, ProtocolError>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        match response {
            Ok(ok) => {
                if self.answers_current_membership(&ok) {
                    self.reconcile(now, ok, env, out);
                }
            }
            Err(ProtocolError::UnreleasedInstanceId) => {
                self.kip848_mut().joining = false; // Retried at a poll after the backoff.
                self.kip848_mut().retry_at = now + UNRELEASED_BACKOFF;
            }
            Err(_) => {
                if self.member_id.is_some() {
                    self.send_cg_join(now, out);
                }
            }
        }
    }

    /// Whether a successful response answers the member's current membership: its member id,
    /// or, while a join is in flight, any id but the one given up. The Java client has one
    /// heartbeat in flight at a time (AK `AbstractHeartbeatRequestManager.poll`:
    /// `canSendRequest`, `requestInFlight`) and ignores responses when not in the group
    /// (`ConsumerMembershipManager.onHeartbeatSuccess`: LEAVING, `isNotInGroup`), so a
    /// response never carries an old membership back; the model's heartbeats may overlap (an
    /// acknowledgement while one is in flight), so it drops such a response instead of taking
    /// the old id back beside the new one.
    fn answers_current_membership(&mut self, ok: &CgHeartbeatOk) -> bool {
        match &self.member_id {
            Some(id) => *id == ok.member_id,
            None => {
                let state = self.kip848_mut();
                state.joining && state.dropped_id.as_ref() != Some(&ok.member_id)
            }
        }
    }

    /// Whether `ok` would change nothing (`reconcile`): the member, not joining, already has
    /// that id, epoch and exactly the assigned partitions.
    pub fn cg_response_changes_nothing(&self, ok: &CgHeartbeatOk) -> bool {
        let (joining, waiting) = match &self.membership {
            Membership::Kip848(state) => (state.joining, state.waiting.is_some()),
            Membership::Classic | Membership::Assigned(_) => return false,
        };
        !joining
            && !waiting
            && self.phase == Phase::Stable
            && self.member_id.as_ref() == Some(&ok.member_id)
            && ok.member_epoch == self.generation
            && ok.member_epoch == self.owned_generation
            && self.owns_exactly(&ok.assigned)
            && self.owns_all_committed(ok)
    }

    /// Whether the member owns every partition of `ok`'s committed offsets: at once when they
    /// are the assigned ones in order (how the coordinator answers, `on_member_heartbeat`), else
    /// one lookup each.
    fn owns_all_committed(&self, ok: &CgHeartbeatOk) -> bool {
        ok.committed.iter().map(|(tp, _)| tp).eq(ok.assigned.iter())
            || ok.committed.iter().all(|(tp, _)| self.poll_loop.owned.contains_key(tp))
    }

    /// Whether reconciliations wait for the next poll: the Java client with a rebalance
    /// listener. AK `ConsumerMembershipManager.invokeOnPartitionsRevokedCallback` /
    /// `invokeOnPartitionsAssignedCallback` enqueue the callback for the application thread
    /// when `subscriptions.rebalanceListener()` is present (else the future completes at
    /// once); `AbstractMembershipManager.revokeAndAssign` makes the assignment current and
    /// transitions to ACKNOWLEDGING only when `revokePartitions` (commit, then
    /// onPartitionsRevoked) and `assignPartitions` (onPartitionsAssigned, invoked even for an
    /// empty set) completed. librdkafka: the real KIP-848 stall-join runs (members with
    /// on_assign / on_revoke, results/real/4.4.0) complete the join while the member stalls, so
    /// it reconciles at once, as before.
    pub(crate) fn reconciles_in_poll(&self) -> bool {
        self.params.client == Client::Java && self.params.rebalance_listener
    }

    /// Takes a response: the membership (id, epoch, heartbeat timer) at once, as AK's
    /// background thread does (`onHeartbeatSuccess`); its assignment at once, or at the next
    /// poll when [`Consumer::reconciles_in_poll`] and it changes the owned partitions (a
    /// member waiting in poll does it now: `Consumer::wake` follows every response).
    fn reconcile<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        ok: CgHeartbeatOk,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        let joined = std::mem::take(&mut self.kip848_mut().joining);
        self.member_id = Some(ok.member_id.clone());
        self.phase = Phase::Stable;
        if joined {
            self.kip848_mut().interval = Some(ok.heartbeat_interval);
            out.arm(ConsumerTimer::Heartbeat, now + ok.heartbeat_interval);
        }
        let changes = !self.poll_loop.owned.keys().eq(ok.assigned.iter());
        if changes && self.reconciles_in_poll() {
            // Heartbeats meanwhile carry the new epoch (the coordinator fences any other).
            self.generation = ok.member_epoch;
            self.kip848_mut().waiting = Some(ok);
            return;
        }
        // A response that changes nothing supersedes a waiting one (AK reconciles the latest
        // target only: `maybeReconcile`, `targetAssignmentReconciled`).
        self.kip848_mut().waiting = None;
        self.apply_reconciliation(now, ok, env, out);
    }

    /// Applies the assignment of a response; acknowledges any change of partitions at once.
    fn apply_reconciliation<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        ok: CgHeartbeatOk,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        let assigned: BTreeSet<Tp> = ok.assigned.iter().copied().collect();
        // Revocations commit with the current epoch, before it changes.
        let revoked = self.revoke_missing(&assigned, out);
        let added = self.take_new(now, ok.committed, env, out);
        self.restart_auto_commit_timer_if(now, revoked || added);
        let epoch_changed = ok.member_epoch != self.owned_generation;
        self.generation = ok.member_epoch;
        self.owned_generation = ok.member_epoch;
        if revoked || added || epoch_changed {
            let (owned, generation) = (self.owned(), ok.member_epoch);
            out.note(ConsumerNote::Assigned { owned, generation, rejoining: !ok.stable });
        }
        // Any completed reconciliation (revoked or added partitions) is acknowledged by an
        // immediate heartbeat reporting the owned partitions: AK
        // `AbstractMembershipManager.revokeAndAssign` transitions to ACKNOWLEDGING once the
        // assignment is applied, and `shouldHeartbeatNow` (ACKNOWLEDGING) makes
        // `ConsumerHeartbeatRequestManager.poll` send at once; librdkafka
        // `rd_kafka_cgrp_consumer_assignment_done` calls
        // `rd_kafka_cgrp_consumer_expedite_next_heartbeat` likewise. An epoch that changes
        // alone is no new assignment (`maybeReconcile`: target already reconciled): no ack.
        if revoked || added {
            self.send_cg(now, self.generation, Some(self.owned()), None, out);
        }
    }

    /// Drops any membership and sends a join (epoch 0).
    fn send_cg_join(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        self.drop_membership(out);
        self.kip848_mut().joining = true;
        self.kip848_mut().retry_at = now + REQUEST_TIMEOUT;
        self.send_cg(now, 0, Some(Vec::new()), None, out);
    }

    /// Forgets the membership: partitions lost (no commit), epoch reset.
    fn drop_membership(&mut self, out: &mut ConsumerOutbox) {
        if !self.poll_loop.owned.is_empty() {
            let tps = self.owned();
            self.poll_loop.owned.clear();
            out.note(ConsumerNote::Lost { tps });
        }
        if let Some(id) = self.member_id.take() {
            self.kip848_mut().dropped_id = Some(id);
        }
        self.generation = -1;
        self.owned_generation = -1;
        self.phase = Phase::Unjoined;
        self.kip848_mut().joining = false;
        self.kip848_mut().waiting = None;
        out.cancel(ConsumerTimer::Heartbeat);
    }

    fn send_leave(&mut self, reason: LeaveReason, out: &mut ConsumerOutbox) {
        let epoch = if self.params.static_membership { STATIC_LEAVE_EPOCH } else { LEAVE_EPOCH };
        self.push_request(epoch, None, Some(reason), out);
        out.cancel(ConsumerTimer::Heartbeat);
    }

    /// Sends a heartbeat (unless cut off) and re-arms the timer one interval later.
    fn send_cg(
        &mut self,
        now: SimTime,
        member_epoch: i32,
        owned: Option<Vec<Tp>>,
        leave_reason: Option<LeaveReason>,
        out: &mut ConsumerOutbox,
    ) {
        self.push_request(member_epoch, owned, leave_reason, out);
        if let (Some(interval), true) = (self.kip848_mut().interval, member_epoch > 0) {
            out.arm(ConsumerTimer::Heartbeat, now + interval);
        }
    }

    /// Sends a ConsumerGroupHeartbeat unless cut off.
    fn push_request(
        &mut self,
        member_epoch: i32,
        owned: Option<Vec<Tp>>,
        leave_reason: Option<LeaveReason>,
        out: &mut ConsumerOutbox,
    ) {
        if !self.disconnected {
            out.send(ToCoordinator::ConsumerHeartbeat(CgHeartbeat {
                conn: self.conn,
                name: self.name.clone(),
                member_id: self.member_id.clone(),
                member_epoch,
                instance_id: self.params.static_membership.then(|| self.name.clone()),
                owned,
                rebalance_timeout: self.params.max_poll_interval,
                leave_reason,
            }));
        }
    }
}

/// What fast stepping (`world/stepper`) needs to know of a KIP-848 member.
impl Consumer {
    /// The protocol leaves the coming poll-loop steps plain: the member has joined (it has a
    /// member id, no join in flight) and its poll timer has not expired.
    pub(crate) fn kip848_poll_loop_is_plain(&self, state: &Kip848State) -> bool {
        self.member_id.is_some() && !state.poll_expired && !state.joining && state.waiting.is_none()
    }

    /// The heartbeat timer leaves the poll loop alone: it sends a ConsumerGroupHeartbeat from
    /// the membership state alone and re-arms itself.
    pub(crate) fn kip848_input_leaves_poll_loop_alone(input: &ConsumerInput) -> bool {
        matches!(input, ConsumerInput::Timer(ConsumerTimer::Heartbeat))
    }

    /// A heartbeat response that changes nothing ([`Consumer::cg_response_changes_nothing`]:
    /// same member epoch and partitions, which quiet steps do not change); its handling only
    /// wakes a poll that waits for records.
    pub(crate) fn kip848_response_changes_nothing(&self, input: &ConsumerInput) -> bool {
        match input {
            ConsumerInput::Message(ToMember::ConsumerHeartbeat(Ok(ok))) => {
                self.cg_response_changes_nothing(ok)
            }
            _ => false,
        }
    }
}
