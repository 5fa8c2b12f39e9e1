//! The member's side of the classic group protocol (AK `ConsumerCoordinator` /
//! `AbstractCoordinator`, librdkafka `rdkafka_cgrp.c` where `client = "librdkafka"` differs;
//! docs/kafka-facts.md sections 2, 3 and 10).
//!
//! Lifecycle: the first poll sends JoinGroup -> JoinGroup response (the leader runs the
//! assignor and sends it with its SyncGroup) -> SyncGroup response -> the assignment takes
//! effect at the next poll (at once when the member waits in poll). A heartbeat timer runs
//! while the member is in a stable generation; REBALANCE_IN_PROGRESS makes the member rejoin
//! at its next poll: eager members commit (auto-commit) and revoke everything first
//! ([`super::eager`]), cooperative members commit (Java; `Consumer::commit_before_join`) and
//! keep consuming, then revoke what the new assignment takes away (librdkafka commits it
//! first, Java does not) and rejoin at once ([`super::cooperative`]). A Java member handles
//! its JoinGroup response (the leader's assignment, the SyncGroup) inside poll
//! (`Consumer::join_response_waits_for_poll`).
//! `max.poll.interval.ms` counts from the poll that returned the batch in progress: on expiry
//! the member sends LeaveGroup and forgets its generation, so its later commits fail and its
//! next poll reports its partitions lost.

use crate::consumer::{
    Consumer, ConsumerEnv, ConsumerInput, ConsumerNote, ConsumerOutbox, ConsumerTimer, LogView,
    Membership, Phase, RebalanceMode,
};
use crate::protocols::classic::cooperative::withhold_transfers;
use crate::types::{
    JoinOk, LeaveReason, MemberId, ProtocolError, SyncOk, ToCoordinator, ToMember, Tp,
};
use assignors::{GroupInput, Member, Topic};
use scenario::Client;
use sim_core::SimTime;
use std::collections::BTreeSet;

impl Consumer {
    /// At poll: rejoin when the coordinator asked for it (or the member has no generation).
    pub(crate) fn classic_poll(&mut self, out: &mut ConsumerOutbox) {
        if self.rejoin_needed && matches!(self.phase, Phase::Unjoined | Phase::Stable) {
            self.prepare_join(out);
        }
    }

    /// A metadata refresh brought `counts` (`super::metadata`): a classic member whose check
    /// finds them changed rejoins at its next poll (at once when it waits in poll: AK
    /// `KafkaConsumer.poll` runs `coordinator.poll` -> `rejoinNeededOrPending` each time the
    /// network poll returns; librdkafka rejoins from its main thread).
    pub(crate) fn on_metadata<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        counts: Vec<u32>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        let changed = self.topic_metadata.refreshed(counts, self.params.client);
        let classic = matches!(self.membership, Membership::Classic);
        if !changed || !classic || self.member_id.is_none() || self.phase != Phase::Stable {
            // Mid-join, Java looks again when the join completes (`apply_assignment`);
            // librdkafka's check saw the change and the join in progress takes it.
            return;
        }
        self.rejoin_needed = true;
        self.metadata_rejoin = true;
        if self.params.client == Client::Librdkafka {
            // librdkafka rejoins from its own thread, not from the application's poll.
            if self.params.mode == RebalanceMode::Eager {
                self.prepare_join(out);
            } else if self.pending.is_none() {
                self.send_join(out);
            }
            return;
        }
        self.wake(now, env, out);
    }

    /// AK `rejoinNeededOrPending` after `onJoinComplete`: a Java leader whose metadata changed
    /// since it assigned (a refresh during the join) rejoins at its next poll.
    pub(crate) fn rejoin_if_metadata_changed(&mut self) {
        let java_classic =
            self.params.client == Client::Java && matches!(self.membership, Membership::Classic);
        if java_classic && self.topic_metadata.leader_sees_change() {
            self.rejoin_needed = true;
            self.metadata_rejoin = true;
        }
    }

    /// Graceful close: a dynamic member connected sends LeaveGroup.
    pub(crate) fn classic_close(&mut self, out: &mut ConsumerOutbox) {
        let leaves = !self.disconnected && !self.params.static_membership;
        if let (Some(member_id), true) = (self.member_id.clone(), leaves) {
            out.send(ToCoordinator::Leave { member_id, reason: LeaveReason::Close });
        }
    }

    /// The heartbeat timer fired: a Heartbeat in a stable generation, re-armed.
    pub(crate) fn classic_heartbeat_timer(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        if self.phase != Phase::Stable {
            return;
        }
        let Some(member_id) = self.member_id.clone() else { return };
        if !self.disconnected {
            let generation = self.generation;
            out.send(ToCoordinator::Heartbeat { conn: self.conn, member_id, generation });
        }
        out.arm(ConsumerTimer::Heartbeat, now + self.params.heartbeat_interval);
    }

    /// AK `handlePollTimeoutExpiry` + `maybeLeaveGroup`: a dynamic member leaves at once.
    pub(crate) fn classic_poll_timeout(&mut self, out: &mut ConsumerOutbox) {
        let Some(member_id) = self.member_id.take() else { return };
        out.note(ConsumerNote::MaxPollExpired);
        if !self.disconnected && !self.params.static_membership {
            out.send(ToCoordinator::Leave { member_id, reason: LeaveReason::MaxPollExpired });
        }
        self.reset_generation(out);
    }

    /// AK `onJoinPrepare`, then JoinGroup.
    fn prepare_join(&mut self, out: &mut ConsumerOutbox) {
        // AK `ConsumerCoordinator.onJoinPrepare`: no generation or no member id: lost.
        if (self.generation == -1 || self.member_id.is_none()) && !self.poll_loop.owned.is_empty() {
            let tps = self.owned();
            self.poll_loop.owned.clear();
            self.owned_generation = -1;
            out.note(ConsumerNote::Lost { tps });
        }
        self.commit_before_join(out);
        self.eager_revoke_before_join(out);
        self.send_join(out);
    }

    /// The auto-commit before a JoinGroup. Java: before *every* JoinGroup, eager or
    /// cooperative (AK `ConsumerCoordinator.onJoinPrepare`: `if (autoCommitEnabled && ...)
    /// maybeAutoCommitOffsetsAsync()`, for both protocols; only the marking of partitions
    /// pending revocation, `maybeMarkPartitionsPendingRevocation`, is eager-only). librdkafka:
    /// only eager, whose revocation of everything commits (`rd_kafka_cgrp_revoke_all_rejoin`
    /// -> unassign -> `rd_kafka_assignment_serve_removals`); a cooperative librdkafka member
    /// commits what it gives up at the incremental unassign instead
    /// (`Consumer::revoke_missing`).
    ///
    /// Not modeled: the Java client sends the JoinGroup only once this commit's response is
    /// in (`onJoinPrepare` returns false until the future is done), one round trip later.
    fn commit_before_join(&mut self, out: &mut ConsumerOutbox) {
        let commits =
            self.params.mode == RebalanceMode::Eager || self.params.client == Client::Java;
        let member = self.member_id.is_some() && !self.poll_loop.owned.is_empty();
        if commits && member && self.params.auto_commit() {
            self.commit(self.positions(|_| true), out);
        }
    }

    /// Whether a JoinGroup response reaching the member now waits for its next poll: a Java
    /// member handles it only inside `poll()` (AK `AbstractCoordinator.joinGroupIfNeeded`,
    /// run from `ensureActiveGroup` in `ConsumerCoordinator.poll`; the heartbeat thread does
    /// no network I/O while the member is joining: `HeartbeatThread.run` disables itself while
    /// `state.hasNotJoinedGroup()`, i.e. UNJOINED or PREPARING_REBALANCE), so a member busy
    /// with a batch (or stalled) leaves the leader's assignment and the SyncGroup until its
    /// next poll. A member waiting in poll handles it at once (`pollForFetches` polls the
    /// network), and so does one waiting for a synchronous commit (`commitSync` polls it too).
    /// librdkafka's main thread serves the coordinator independently of the application's poll
    /// (`rd_kafka_cgrp_handle_JoinGroup` -> the leader's Metadata request ->
    /// `rd_kafka_cgrp_assignor_handle_Metadata_op` -> `rd_kafka_cgrp_assignor_run` -> SyncGroup,
    /// `rdkafka_cgrp.c`): at once (the leader's Metadata round trip is not modeled).
    pub(crate) fn join_response_waits_for_poll(&self) -> bool {
        self.params.client == Client::Java
            && matches!(self.membership, Membership::Classic)
            && self.poll_loop.in_batch()
    }

    /// The JoinGroup response handled (AK `JoinGroupResponseHandler`): a generation joined, or
    /// an error that resets the member while it was joining.
    pub(crate) fn on_join_response<L: LogView + ?Sized>(
        &mut self,
        response: Result<JoinOk, ProtocolError>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        match response {
            Ok(join) => self.on_join_ok(join, env, out),
            Err(_) if self.phase == Phase::Joining => self.reset_generation(out),
            Err(_) => {}
        }
    }

    pub(crate) fn on_join_ok<L: LogView + ?Sized>(
        &mut self,
        join: JoinOk,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if self.phase != Phase::Joining {
            return;
        }
        self.member_id = Some(join.member_id.clone());
        self.generation = join.generation;
        self.phase = Phase::Syncing;
        // A static leader rejoining a Stable group gets no members (JoinGroup v9
        // `skipAssignment`): the coordinator keeps the current assignment.
        let is_leader = join.leader == join.member_id;
        let (assignment, topic_counts) = if is_leader && !join.members.is_empty() {
            let (assignment, counts) = self.lead(&join, env);
            (Some(assignment), counts)
        } else {
            if is_leader {
                // AK `onLeaderElected` with `skipAssignment`: "assignmentSnapshot =
                // metadataSnapshot".
                let known = self.topic_metadata.known().to_vec();
                self.topic_metadata.led_with(&known, self.params.client);
            } else {
                self.topic_metadata.followed(self.params.client);
            }
            (None, Vec::new())
        };
        if !self.disconnected {
            out.send(ToCoordinator::Sync {
                conn: self.conn,
                member_id: join.member_id,
                generation: join.generation,
                assignment,
                topic_counts,
            });
        }
    }

    /// The leader's assignment (AK `ConsumerCoordinator.onLeaderElected`). Cooperative: a
    /// partition whose owner changes is withheld from its new owner for this round
    /// (`adjustAssignment`; a no-op when the assignor already did it). Also the partition
    /// counts it assigned with.
    pub(crate) fn lead<L: LogView + ?Sized>(
        &mut self,
        join: &JoinOk,
        env: &mut ConsumerEnv<'_, L>,
    ) -> (Vec<(MemberId, Vec<Tp>)>, Vec<u32>) {
        let all_topics: Vec<u32> = (0..env.topics.len() as u32).collect();
        let topics = self.assignment_topics(env.topics);
        let members = join
            .members
            .iter()
            .map(|m| {
                let mut owned = m.owned.clone();
                owned.sort();
                Member {
                    id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    topics: all_topics.clone(),
                    owned,
                    generation: m.owned_generation,
                    ..Member::default()
                }
            })
            .collect();
        let counts = topics.iter().map(|t| t.partitions).collect();
        let input = GroupInput { topics, members, ..GroupInput::default() };
        let result = assignors::assign(self.params.assignor, &input, env.assignor_rng);
        let mut assignment: Vec<(MemberId, Vec<Tp>)> =
            input.members.iter().map(|m| m.id.clone()).zip(result.partitions).collect();
        if self.params.mode == RebalanceMode::Cooperative {
            withhold_transfers(&input.members, &mut assignment);
        }
        (assignment, counts)
    }

    /// The topics the leader assigns (`super::metadata`): Java, with the partition counts it
    /// knows; librdkafka, with the current ones (its assignor's own Metadata request).
    fn assignment_topics(&mut self, current: &[Topic]) -> Vec<Topic> {
        let client = self.params.client;
        let known = self.topic_metadata.known();
        let topics: Vec<Topic> = match client {
            Client::Java if known.len() == current.len() => current
                .iter()
                .zip(known)
                .map(|(t, &partitions)| Topic { name: t.name.clone(), partitions })
                .collect(),
            _ => current.to_vec(),
        };
        let counts: Vec<u32> = topics.iter().map(|t| t.partitions).collect();
        self.topic_metadata.led_with(&counts, client);
        topics
    }

    pub(crate) fn on_sync_ok(&mut self, now: SimTime, sync: SyncOk, out: &mut ConsumerOutbox) {
        if self.phase != Phase::Syncing || sync.generation != self.generation {
            return;
        }
        self.phase = Phase::Stable;
        out.arm(ConsumerTimer::Heartbeat, now + self.params.heartbeat_interval);
        // Both clients hand the result to the application's callbacks, served in poll: the
        // revocations (and a cooperative rejoin for round 2) wait for the next poll.
        self.pending = Some(sync);
    }

    pub(crate) fn on_sync_error(&mut self, e: ProtocolError, out: &mut ConsumerOutbox) {
        if self.phase != Phase::Syncing {
            return;
        }
        if e == ProtocolError::RebalanceInProgress {
            self.phase = Phase::Stable;
            self.rejoin_needed = true;
            self.maybe_background_rejoin(out);
        } else {
            // AK `AbstractCoordinator.HeartbeatResponseHandler`: ILLEGAL_GENERATION keeps the
            // member id (`resetStateOnResponseError(.., error != ILLEGAL_GENERATION)`).
            let kept = self.member_id.take().filter(|_| e == ProtocolError::IllegalGeneration);
            self.reset_generation(out);
            self.member_id = kept;
        }
    }

    pub(crate) fn on_heartbeat_error(&mut self, e: ProtocolError, out: &mut ConsumerOutbox) {
        if self.phase != Phase::Stable {
            return;
        }
        if e == ProtocolError::RebalanceInProgress {
            self.rejoin_needed = true;
            self.maybe_background_rejoin(out);
        } else {
            // AK `AbstractCoordinator.HeartbeatResponseHandler`: ILLEGAL_GENERATION keeps the
            // member id (`resetStateOnResponseError(.., error != ILLEGAL_GENERATION)`).
            let kept = self.member_id.take().filter(|_| e == ProtocolError::IllegalGeneration);
            self.reset_generation(out);
            self.member_id = kept;
        }
    }

    pub(crate) fn reset_generation(&mut self, out: &mut ConsumerOutbox) {
        self.member_id = None;
        self.generation = -1;
        self.phase = Phase::Unjoined;
        self.rejoin_needed = true;
        self.pending = None;
        self.pending_join = None;
        out.cancel(ConsumerTimer::Heartbeat);
    }

    /// AK `onJoinComplete`: the new assignment takes effect.
    pub(crate) fn apply_assignment<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        sync: SyncOk,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if sync.generation != self.generation || self.member_id.is_none() {
            return;
        }
        let assigned: BTreeSet<Tp> = sync.assigned.iter().copied().collect();
        let revoked_now = self.revoke_missing(&assigned, out);
        self.take_new(now, sync.committed, env, out);
        self.owned_generation = sync.generation;
        // `onJoinComplete`: "Reschedule the auto commit starting from now".
        self.restart_auto_commit_timer(now);
        if revoked_now {
            self.rejoin_needed = true;
        }
        self.rejoin_if_metadata_changed();
        let rejoining = self.rejoin_needed || self.phase == Phase::Joining;
        out.note(ConsumerNote::Assigned {
            owned: self.owned(),
            generation: sync.generation,
            rejoining,
        });
    }

    pub(crate) fn send_join(&mut self, out: &mut ConsumerOutbox) {
        let owned = self.owned();
        let owned_generation = if owned.is_empty() { -1 } else { self.owned_generation };
        if self.params.mode == RebalanceMode::Eager {
            self.poll_loop.owned.clear();
        }
        self.phase = Phase::Joining;
        self.rejoin_needed = false;
        out.cancel(ConsumerTimer::Heartbeat);
        if self.disconnected {
            return;
        }
        out.send(ToCoordinator::Join {
            conn: self.conn,
            client_id: self.params.client_id(&self.name).to_string(),
            member_id: self.member_id.clone(),
            group_instance_id: self.params.static_membership.then(|| self.name.clone()),
            owned,
            owned_generation,
            rebalance_timeout: self.params.max_poll_interval,
            session_timeout: self.params.session_timeout,
            metadata_changed: std::mem::take(&mut self.metadata_rejoin),
        });
    }
}

/// What fast stepping (`world/stepper`) needs to know of a classic member.
impl Consumer {
    /// The protocol leaves the coming poll-loop steps plain (only fetching and processing):
    /// the member is in a stable generation, or awaits its JoinGroup or SyncGroup response (it
    /// keeps fetching its partitions meanwhile, and the response comes as a message, which
    /// catches the member up first), and no rejoin waits for its next poll.
    pub(crate) fn classic_poll_loop_is_plain(&self) -> bool {
        matches!(self.phase, Phase::Stable | Phase::Joining | Phase::Syncing)
            && self.member_id.is_some()
            && !self.rejoin_needed
    }

    /// The heartbeat timer leaves the poll loop alone: it sends a Heartbeat from the group
    /// state alone and re-arms itself.
    pub(crate) fn classic_input_leaves_poll_loop_alone(input: &ConsumerInput) -> bool {
        matches!(input, ConsumerInput::Timer(ConsumerTimer::Heartbeat))
    }

    /// A heartbeat response without error changes nothing; its handling only wakes a poll
    /// that waits for records.
    pub(crate) fn classic_response_changes_nothing(input: &ConsumerInput) -> bool {
        matches!(input, ConsumerInput::Message(ToMember::Heartbeat(None)))
    }
}
