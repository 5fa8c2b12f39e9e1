//! The eager rebalance mode of the classic protocol (`protocol = "eager"`): before rejoining,
//! a member commits (auto-commit) and revokes everything it owns (the group stops the world
//! until the new assignment); its JoinGroup then reports nothing owned. The rest of the
//! member's side is shared with cooperative ([`super::member`]).

use crate::consumer::{Consumer, ConsumerNote, ConsumerOutbox, RebalanceMode, RevokeCause};

impl Consumer {
    /// AK `onJoinPrepare` (eager): after the commit (`Consumer::commit_before_join`), revoke
    /// every owned partition.
    pub(crate) fn eager_revoke_before_join(&mut self, out: &mut ConsumerOutbox) {
        if self.params.mode == RebalanceMode::Eager && !self.poll_loop.owned.is_empty() {
            out.note(ConsumerNote::Revoked { tps: self.owned(), cause: RevokeCause::StopTheWorld });
        }
    }
}
