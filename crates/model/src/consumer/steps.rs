//! What the world needs to step a member's poll loop outside the event queue (fast stepping,
//! `world/lazy.rs`): which poll-loop step is pending, whether the next steps can only process
//! records (no request, no callback), and until when that holds.

use super::{Consumer, ConsumerTimer, Phase, RebalanceMode};
use scenario::{Client, CommitPolicy};
use sim_core::SimTime;

impl Consumer {
    /// The pending step of the poll loop: the end of the batch in progress, or the wake-up of
    /// a poll waiting for records.
    pub fn poll_step(&self) -> Option<ConsumerTimer> {
        match &self.batch {
            Some(batch) => Some(ConsumerTimer::BatchDone { epoch: batch.epoch }),
            None if self.in_poll => Some(ConsumerTimer::PollWake { epoch: self.epoch }),
            None => None,
        }
    }

    /// True when the coming poll-loop steps only fetch and process records: the member is in
    /// a stable generation (or KIP-848 epoch) with nothing waiting for its poll (no
    /// assignment, rejoin, close, commit response), connected, and commits are not per batch.
    /// Such steps send nothing and report only `Processed` until [`Consumer::loud_at`].
    pub fn poll_loop_is_quiet(&self) -> bool {
        let idle_protocol = match self.params.mode {
            RebalanceMode::Consumer => {
                self.member_id.is_some() && !self.kip848.poll_expired && !self.kip848.joining
            }
            _ => self.phase == Phase::Stable && self.member_id.is_some() && !self.rejoin_needed,
        };
        self.alive
            && idle_protocol
            && !self.closing
            && !self.disconnected
            && self.awaiting_commit.is_none()
            && self.pending.is_none()
            && self.external.is_none()
            && self.params.commit == CommitPolicy::Auto
            && self.poll_step().is_some()
    }

    /// The first time from which a poll does more than fetch: the Java client's auto-commit
    /// inside `poll()` falls due (`SimTime::MAX` when there is none).
    pub fn loud_at(&self) -> SimTime {
        if self.params.client == Client::Java && self.params.auto_commit() {
            self.last_auto_commit.saturating_add(self.params.auto_commit_interval)
        } else {
            SimTime::MAX
        }
    }

    /// The `max.poll.interval.ms` timer of the batch in progress: the timer, when it expires,
    /// and when the poll that armed it ran.
    pub fn batch_poll_timer(&self) -> Option<(ConsumerTimer, SimTime, SimTime)> {
        let batch = self.batch.as_ref()?;
        let timer = ConsumerTimer::MaxPoll { epoch: batch.epoch };
        Some((timer, self.poll_deadline(batch.polled), batch.polled))
    }
}
