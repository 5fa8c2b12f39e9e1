//! Kafka's `StickyAssignor` (eager, KIP-54) and `CooperativeStickyAssignor` (KIP-429).
//!
//! Both run `AbstractStickyAssignor` (apache/kafka
//! `clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java`,
//! non-rack path):
//!
//! 1. **Claims** ([`resolve_claims`]): each member's `owned` partitions with its `generation`
//!    (for the eager assignor, Kafka reads them from the userData; for the cooperative one from
//!    `ownedPartitions` and the generation id; both are `Member::owned`/`generation` here).
//!    Per partition the claim of the highest generation wins; if two or more members claim it
//!    in that generation it is dropped from all of them and remembered as "claimed by multiple
//!    previous owners" (KAFKA-12984). Kafka applies this pairwise in `HashMap` order; the
//!    order-free rule here gives the same answer except when a higher generation wins after a
//!    lower-generation collision (Kafka then drops it too).
//! 2. **All subscriptions equal** ([`constrained`]): Kafka's `constrainedAssign`. Quotas
//!    `min = P / N`, `max = ceil(P / N)`, `P % N` members may hold `max`. Members are visited in
//!    Java `HashMap` order of their ids (as Kafka iterates `consumerToOwnedPartitions`): a member
//!    with fewer than `min` claims keeps them all and is "under min"; one with `max` or more
//!    keeps its first `max` (claims sorted by partition number, then topic, as Kafka 3.5+'s
//!    `ConstrainedAssignmentBuilder` sorts them) while members at `max` are still expected;
//!    otherwise it keeps its first `min` and may get one extra. Excess claims are revoked. Then the unassigned
//!    partitions (sorted) are dealt round-robin to the under-min members (sorted by id), and
//!    then one each to the "exactly min" queue. Balance is therefore exact: max - min <= 1.
//! 3. **Unequal subscriptions**: a port of Kafka's `GeneralAssignmentBuilder`
//!    ([`crate::sticky_general`]), sticky to the claims of the highest generation and handing
//!    partitions back to their previous-generation owners while that balances.
//! 4. **Cooperative** ([`assign`] with `cooperative`): partitions that change owner are
//!    withheld from the new owner (`CooperativeStickyAssignor.adjustAssignment`). In the equal
//!    case these are the revoked claims and the multiply claimed partitions
//!    (`partitionsTransferringOwnership`); in the general case Kafka recomputes them from the
//!    raw `ownedPartitions` (`computePartitionsTransferringOwnership`): assigned to a member
//!    that did not own it and owned by a member that lost it.

use crate::common::{
    java_cmp, java_hashmap_order, to_assignment, PartitionIndex, Subscriptions, NO_MEMBER,
};
use crate::sticky_general;
use crate::{GroupAssignment, GroupInput};
use std::collections::VecDeque;

/// Valid claims after generation resolution.
pub(crate) struct Claims {
    /// Per member, the global indices it still owns validly, in its `owned` order.
    pub(crate) owned: Vec<Vec<usize>>,
    /// Per partition: claimed by several members in its highest claimed generation.
    pub(crate) multi: Vec<bool>,
}

/// The sticky (or cooperative-sticky) assignment of `input`.
pub(crate) fn assign(input: &GroupInput, cooperative: bool) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let (mut per_member, transferring) = sticky_core(input, &ix);
    if cooperative {
        let moving = match transferring {
            Some(moving) => moving,
            None => transferring_from_raw(input, &ix, &per_member),
        };
        for list in &mut per_member {
            list.retain(|&p| !moving[p]);
        }
    }
    to_assignment(&ix, per_member)
}

/// The sticky assignment as global indices, and the partitions transferring ownership when
/// the constrained (all subscriptions equal) path computed them.
fn sticky_core(input: &GroupInput, ix: &PartitionIndex) -> (Vec<Vec<usize>>, Option<Vec<bool>>) {
    let subs = Subscriptions::new(input);
    let claims = resolve_claims(input, ix, &subs);
    if input.members.is_empty() {
        return (Vec::new(), None);
    }
    if subs.all_equal() {
        let (per_member, moving) = constrained(input, ix, &subs, &claims);
        (per_member, Some(moving))
    } else {
        // `assignOwnedPartitions` sets `revocationRequired` when a member claims a partition
        // of an existing topic it no longer subscribes to (its claim is valid otherwise).
        let all_claims = resolve_claims_where(input, ix, |_| true);
        let revocation_required = all_claims
            .owned
            .iter()
            .enumerate()
            .any(|(m, list)| list.iter().any(|&p| !subs.has(m, ix.topic_of(p))));
        let kept = keep_subscribed(ix, &subs, claims.owned);
        (sticky_general::assign(input, ix, &subs, &kept, revocation_required), None)
    }
}

/// Resolves owned-partition claims by generation (step 1 of the module doc). Claims on
/// partitions that do not exist or whose topic nobody subscribes to are ignored.
pub(crate) fn resolve_claims(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
) -> Claims {
    resolve_claims_where(input, ix, |t| subs.any[t as usize])
}

/// [`resolve_claims`] over the claims on topics `keep_topic` accepts.
fn resolve_claims_where(
    input: &GroupInput,
    ix: &PartitionIndex,
    keep_topic: impl Fn(u32) -> bool,
) -> Claims {
    let total = ix.total();
    let mut best_gen = vec![i32::MIN; total];
    let mut owner = vec![NO_MEMBER; total];
    let mut multi = vec![false; total];
    for (m, member) in input.members.iter().enumerate() {
        for &tp in &member.owned {
            let Some(p) = ix.index(tp) else { continue };
            if !keep_topic(tp.topic) {
                continue;
            }
            if member.generation > best_gen[p] {
                best_gen[p] = member.generation;
                owner[p] = m as u32;
                multi[p] = false;
            } else if member.generation == best_gen[p] {
                multi[p] = true;
            }
        }
    }
    let owned = input
        .members
        .iter()
        .enumerate()
        .map(|(m, member)| {
            let mut seen = Vec::new();
            for &tp in &member.owned {
                if let Some(p) = ix.index(tp) {
                    if owner[p] == m as u32 && !multi[p] {
                        seen.push(p);
                    }
                }
            }
            seen
        })
        .collect();
    Claims { owned, multi }
}

/// Drops claims on topics the claiming member no longer subscribes to.
fn keep_subscribed(
    ix: &PartitionIndex,
    subs: &Subscriptions,
    owned: Vec<Vec<usize>>,
) -> Vec<Vec<usize>> {
    owned
        .into_iter()
        .enumerate()
        .map(|(m, list)| list.into_iter().filter(|&p| subs.has(m, ix.topic_of(p))).collect())
        .collect()
}

/// Quota bookkeeping of the constrained path.
struct Quotas {
    min: usize,
    max: usize,
    expected_over: usize,
    current_over: usize,
}

/// Kafka's `constrainedAssign` (step 2 of the module doc). Returns the assignment and, per
/// partition, whether it transfers ownership.
pub(crate) fn constrained(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    claims: &Claims,
) -> (Vec<Vec<usize>>, Vec<bool>) {
    let n = input.members.len();
    let topics = subs.topics_of(0);
    let total: usize = topics.iter().map(|&t| ix.range(t).len()).sum();
    let mut q = Quotas {
        min: total / n,
        max: total.div_ceil(n),
        expected_over: total % n,
        current_over: 0,
    };
    let mut assigned = vec![false; ix.total()];
    let mut revoked = vec![false; ix.total()];
    let mut per_member: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut under_min = Vec::new();
    let mut exactly_min = Vec::new();
    let ids: Vec<&str> = input.members.iter().map(|m| m.id.as_str()).collect();
    for m in java_hashmap_order(&ids) {
        // Kafka (3.5+, `ConstrainedAssignmentBuilder.assignOwnedPartitions`) sorts the owned
        // partitions by partition number, then topic, before keeping the first min/max.
        let mut keyed: Vec<(u32, u32, usize)> = claims.owned[m]
            .iter()
            .map(|&p| {
                let tp = ix.tp(p);
                (tp.partition, tp.topic, p)
            })
            .collect();
        keyed.sort_unstable();
        let owned: Vec<usize> = keyed.into_iter().map(|(_, _, p)| p).collect();
        let keep = if owned.len() < q.min {
            under_min.push(m);
            owned.len()
        } else if owned.len() >= q.max && q.current_over < q.expected_over {
            q.current_over += 1;
            if q.current_over == q.expected_over {
                exactly_min.clear();
            }
            q.max
        } else {
            if q.current_over < q.expected_over {
                exactly_min.push(m);
            }
            q.min
        };
        for &p in &owned[..keep] {
            per_member[m].push(p);
            assigned[p] = true;
        }
        for &p in &owned[keep..] {
            revoked[p] = true;
        }
    }
    let by_id = |a: &usize, b: &usize| java_cmp(&input.members[*a].id, &input.members[*b].id);
    under_min.sort_by(by_id);
    exactly_min.sort_by(by_id);
    let unassigned = topics.iter().flat_map(|&t| ix.range(t)).filter(|&p| !assigned[p]);
    let mut moving = vec![false; ix.total()];
    let mut filler = Filler { under_min, cursor: 0, exactly_min: VecDeque::from(exactly_min) };
    for p in unassigned {
        let m = filler.next_member();
        per_member[m].push(p);
        if revoked[p] || claims.multi[p] {
            moving[p] = true;
        }
        let count = per_member[m].len();
        if count == q.min {
            filler.remove_current();
            filler.exactly_min.push_back(m);
        } else if count == q.max {
            q.current_over += 1;
        }
    }
    (per_member, moving)
}

/// The round-robin over under-min members (a Java `LinkedList` iterator that restarts from
/// the head) falling back to the exactly-min queue.
struct Filler {
    under_min: Vec<usize>,
    cursor: usize,
    exactly_min: VecDeque<usize>,
}

impl Filler {
    /// The member that receives the next unassigned partition.
    fn next_member(&mut self) -> usize {
        if self.cursor < self.under_min.len() {
            self.cursor += 1;
            return self.under_min[self.cursor - 1];
        }
        if self.under_min.is_empty() {
            // Kafka throws IllegalStateException here; the quotas make it unreachable.
            return self
                .exactly_min
                .pop_front()
                .expect("constrained sticky: quotas leave no partition without a member");
        }
        self.cursor = 1;
        self.under_min[0]
    }

    /// `Iterator.remove()` of the member just returned, if it came from the under-min list.
    fn remove_current(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            self.under_min.remove(self.cursor);
        }
    }
}

/// `computePartitionsTransferringOwnership`: partitions assigned to a member that did not list
/// them as owned and listed as owned by a member that is not assigned them.
fn transferring_from_raw(
    input: &GroupInput,
    ix: &PartitionIndex,
    per_member: &[Vec<usize>],
) -> Vec<bool> {
    let mut final_owner = vec![NO_MEMBER; ix.total()];
    for (m, list) in per_member.iter().enumerate() {
        for &p in list {
            final_owner[p] = m as u32;
        }
    }
    let mut revoked = vec![false; ix.total()];
    let mut raw_owner_kept = vec![false; ix.total()];
    for (m, member) in input.members.iter().enumerate() {
        for &tp in &member.owned {
            let Some(p) = ix.index(tp) else { continue };
            if final_owner[p] == m as u32 {
                raw_owner_kept[p] = true;
            } else {
                revoked[p] = true;
            }
        }
    }
    // Added = assigned to a member that did not own it: its final owner is not among the raw
    // owners, i.e. `raw_owner_kept` is false.
    (0..ix.total())
        .map(|p| final_owner[p] != NO_MEMBER && revoked[p] && !raw_owner_kept[p])
        .collect()
}
