//! A classic member's topic metadata: the partition counts it knows, when it refreshes them,
//! and the rejoin a change of them causes (issue 25 item 5). The classic group coordinator
//! does not watch topics (only KIP-848 groups react to new partitions on the broker side), so
//! added partitions reach a classic group only through its members' metadata refreshes.
//!
//! Java (apache/kafka `clients/.../consumer/internals/ConsumerCoordinator.java`,
//! `Metadata.java`): the client refreshes its metadata `metadata.max.age.ms` after the last
//! refresh (`Metadata.timeToNextUpdate`: `lastSuccessfulRefreshMs + metadataExpireMs`); the
//! request goes out from whichever thread polls the network client, the heartbeat thread
//! included, so a busy application does not delay it. Only the leader watches for changes: it
//! keeps the metadata it assigned with (`assignmentSnapshot`, taken in `onLeaderElected`;
//! `onJoinComplete` clears it on a member that did not lead) and `rejoinNeededOrPending`
//! compares it with the current snapshot at every `poll()`: "cached metadata has changed",
//! JoinGroup. The leader assigns with the metadata it has (`assignor.assign(metadata.fetch(),
//! ..)`; `updateGroupSubscription` refreshes first only when the group subscribes to topics
//! the leader does not). So a Java group sees added partitions at its leader's next refresh,
//! and a rebalance for another reason before it hands out only the partitions the leader knew.
//!
//! librdkafka (`src/rdkafka.c` `rd_kafka_metadata_refresh_cb`, `src/rdkafka_cgrp.c`
//! `rd_kafka_cgrp_metadata_update_check`): a refresh every
//! `topic.metadata.refresh.interval.ms` from the client's creation; after each, every member
//! (not only the leader) compares the subscribed topics' partition counts with the ones its
//! last check saw (`rd_kafka_cgrp_update_subscribed_topics`) and rejoins when they changed
//! (eager: `rd_kafka_cgrp_revoke_rejoin`; cooperative: `rd_kafka_cgrp_rejoin`). The leader
//! requests metadata before it runs the assignor ("partition assignor"), so it assigns with
//! the current counts; that request does not update what the check compares with
//! (`cgrp_update` is false for it, `rd_kafka_parse_Metadata`).
//!
//! The model: a member knows the counts of its start; each refresh response arrives one round
//! trip after its request, and the next request goes out one period after that response
//! (Java), or one period after the previous request (librdkafka's timer). Refreshes are only
//! simulated when they can change something: after partitions were added, the world
//! schedules each live member's next refresh ([`TopicMetadata::next_refresh_after`]).

use scenario::Client;
use sim_core::SimTime;

/// What a classic member knows of the topics' partition counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicMetadata {
    /// The partition counts of its last refresh (or of its start), by topic index.
    known: Vec<u32>,
    /// Java: the counts the member assigned with when it led the last join
    /// (`assignmentSnapshot`); librdkafka: the counts its last change check saw.
    compared: Option<Vec<u32>>,
}

impl TopicMetadata {
    /// The metadata a member fetches when it starts.
    pub fn at_start(counts: Vec<u32>, client: Client) -> TopicMetadata {
        let compared = (client == Client::Librdkafka).then(|| counts.clone());
        TopicMetadata { known: counts, compared }
    }

    /// The partition counts the member knows.
    pub fn known(&self) -> &[u32] {
        &self.known
    }

    /// A refresh brought `counts`: whether the member must rejoin its group because of it.
    pub fn refreshed(&mut self, counts: Vec<u32>, client: Client) -> bool {
        self.known = counts;
        let changed = self.leader_sees_change();
        if client == Client::Librdkafka {
            self.compared = Some(self.known.clone());
        }
        changed
    }

    /// Whether the counts known differ from the ones compared with (Java: a leader whose
    /// assignment no longer matches its metadata).
    pub fn leader_sees_change(&self) -> bool {
        self.compared.as_ref().is_some_and(|seen| *seen != self.known)
    }

    /// The member ran the assignor of a join with `counts` (Java: the counts it knows;
    /// librdkafka: the current ones, from its "partition assignor" request).
    pub fn led_with(&mut self, counts: &[u32], client: Client) {
        match client {
            Client::Java => self.compared = Some(counts.to_vec()),
            // The assignor's request refreshes the cache, not what the check compares with.
            Client::Librdkafka => self.known = counts.to_vec(),
        }
    }

    /// The member's join completed and it did not lead it (Java `onJoinComplete`: only the
    /// leader monitors metadata changes).
    pub fn followed(&mut self, client: Client) {
        if client == Client::Java {
            self.compared = None;
        }
    }

    /// When the refresh response that follows `at` arrives, for a member whose client
    /// fetched metadata first at `started` (Java: its start; librdkafka: the client's creation,
    /// where its timer starts) with refresh period `period` and round trip `rtt`: the `k`-th
    /// response (k = 0 the first) arrives at `started + rtt + k x (period + rtt)` (Java: the
    /// next request one period after a response) or `started + rtt + k x period` (librdkafka:
    /// a timer of its own). Strictly after `at`.
    pub fn next_refresh_after(
        at: SimTime,
        started: SimTime,
        period: SimTime,
        rtt: SimTime,
        client: Client,
    ) -> SimTime {
        let first = started + rtt;
        if at < first {
            return first;
        }
        let step = match client {
            Client::Java => period + rtt,
            Client::Librdkafka => period,
        };
        let step_ns = step.as_nanos().max(1);
        let k = (at - first).as_nanos() / step_ns + 1;
        first.saturating_add(SimTime::from_nanos(k.saturating_mul(step_ns)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    #[test]
    fn a_java_leader_rejoins_when_the_counts_differ_from_its_assignment() {
        let mut m = TopicMetadata::at_start(vec![6], Client::Java);
        // A follower does not watch.
        assert!(!m.refreshed(vec![8], Client::Java));
        m.led_with(&[8], Client::Java);
        assert!(!m.refreshed(vec![8], Client::Java));
        assert!(m.refreshed(vec![10], Client::Java));
        // It keeps comparing with what it assigned until it leads again.
        assert!(m.refreshed(vec![10], Client::Java));
        m.led_with(&[10], Client::Java);
        assert!(!m.refreshed(vec![10], Client::Java));
        m.followed(Client::Java);
        assert!(!m.refreshed(vec![12], Client::Java));
        assert_eq!(m.known(), &[12]);
    }

    #[test]
    fn every_librdkafka_member_rejoins_once_per_change_it_sees() {
        let mut m = TopicMetadata::at_start(vec![6], Client::Librdkafka);
        assert!(m.refreshed(vec![8], Client::Librdkafka));
        assert!(!m.refreshed(vec![8], Client::Librdkafka));
        // Leading with fresh counts does not update what the check compares with.
        m.led_with(&[10], Client::Librdkafka);
        assert_eq!(m.known(), &[10]);
        assert!(m.refreshed(vec![10], Client::Librdkafka));
    }

    #[test]
    fn refreshes_follow_the_clients_schedules() {
        // Started at 1 s, rtt 2 ms, period 10 s: responses at 1.002 s, then Java every
        // 10.002 s (11.004, 21.006, ..), librdkafka every 10 s (11.002, 21.002, ..).
        let next =
            |at, client| TopicMetadata::next_refresh_after(t(at), t(1000), t(10_000), t(2), client);
        assert_eq!(next(500, Client::Java), t(1002));
        assert_eq!(next(1002, Client::Java), t(11_004));
        assert_eq!(next(15_000, Client::Java), t(21_006));
        assert_eq!(next(15_000, Client::Librdkafka), t(21_002));
        assert_eq!(next(21_002, Client::Librdkafka), t(31_002));
    }
}
