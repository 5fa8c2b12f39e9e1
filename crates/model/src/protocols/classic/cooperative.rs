//! The cooperative rebalance mode of the classic protocol (KIP-429, `protocol =
//! "cooperative"`): members keep their partitions while rejoining; the leader withholds a
//! partition that changes owner for one round (the old owner revokes it first and rejoins at
//! once: round 2 hands it over). The rest of the member's side is shared with eager
//! ([`super::member`]); the revocation itself is `Consumer::revoke_missing` at the assignment
//! (a Java member commits nothing there: its last commit was before its JoinGroup).

use crate::consumer::{Consumer, ConsumerOutbox, RebalanceMode};
use crate::tp_table::TpTable;
use crate::types::{MemberId, Tp};
use assignors::Member;
use scenario::Client;

impl Consumer {
    /// librdkafka rejoins a cooperative rebalance without waiting for the application.
    pub(crate) fn maybe_background_rejoin(&mut self, out: &mut ConsumerOutbox) {
        let librdkafka_coop = self.params.client == Client::Librdkafka
            && self.params.mode == RebalanceMode::Cooperative;
        if librdkafka_coop && self.member_id.is_some() && self.pending.is_none() {
            self.send_join(out);
        }
    }
}

/// KIP-429 `adjustAssignment`: a partition assigned to someone other than a member that
/// claims it is removed from the new owner this round.
///
/// Claims are kept in a dense table (one slot per partition): the leader of a group of
/// 1,000 members over 10,000 partitions checks every partition at each round.
pub fn withhold_transfers(members: &[Member], assignment: &mut [(MemberId, Vec<Tp>)]) {
    let mut claimed: TpTable<&str> = TpTable::default();
    // A later claim replaces an earlier one, as in a map.
    claimed.extend(members.iter().flat_map(|m| m.owned.iter().map(|tp| (*tp, m.id.as_str()))));
    for (id, parts) in assignment.iter_mut() {
        parts.retain(|tp| claimed.get(*tp).is_none_or(|owner| *owner == id.as_str()));
    }
}
