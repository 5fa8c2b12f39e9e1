//! Named invariants: every stateful machine of the model states the facts that must hold
//! between two events as a list of small functions, each returning `Err(`[`Broken`]`)` naming
//! itself (`classic.assignment_exclusive`) and saying what exactly broke.
//!
//! Where the facts live: beside their state. The consumer's in `crate::consumer`
//! (`Consumer::FACTS`), the classic coordinator's in `protocols/classic/coordinator.rs`, the
//! KIP-848 coordinator's in `protocols/kip848/coordinator.rs`, the TubeMQ master's in
//! `protocols/tubemq_server/master.rs`. The facts that span members are the world's, at the
//! end of this file: no partition consumed by two members in one generation, a protocol's
//! single owner, the classic generation only grows, no member ahead of its coordinator's
//! generation, every member's state reported (`world/member_state.rs`). Each machine offers
//! `broken()` (the first fact that does not hold, if any) and `check_invariants()` (panics
//! naming it). The run loop asserts the world's facts, and through them every machine's,
//! after every event in debug builds and tests; release builds never evaluate them. A probe
//! reads them without panicking through `WorldView::broken` (chaos mode reports a broken fact
//! as a violation of that name).

use crate::types::Tp;
use crate::world::{Stepper, World};
use std::collections::BTreeMap;
use std::fmt;

/// A fact that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    /// The fact's name: `machine.fact` (`classic.assignment_exclusive`).
    pub fact: &'static str,
    /// What exactly broke (partitions, members, generations).
    pub detail: String,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.fact, self.detail)
    }
}

/// One named fact about a `T`.
pub type Fact<T> = fn(&T) -> Result<(), Broken>;

/// `Ok` if `holds`, else the fact `fact` broken with the detail `detail()` (formatted only
/// then).
pub fn require(
    holds: bool,
    fact: &'static str,
    detail: impl FnOnce() -> String,
) -> Result<(), Broken> {
    if holds {
        Ok(())
    } else {
        Err(Broken { fact, detail: detail() })
    }
}

/// The first of `facts` that does not hold on `state`.
pub fn first_broken<T>(state: &T, facts: &[Fact<T>]) -> Option<Broken> {
    facts.iter().find_map(|fact| fact(state).err())
}

/// Panics naming the broken fact, if any.
pub fn assert_holds(broken: Option<Broken>) {
    if let Some(b) = broken {
        panic!("invariant {} broken: {}", b.fact, b.detail);
    }
}

impl<S: Stepper> World<'_, S> {
    /// The first fact of the world that does not hold. The world's facts, in the order they
    /// are checked: the group's machine, then every live consumer, then the facts that span
    /// members.
    pub(crate) fn broken(&self) -> Option<Broken> {
        let facts: [Fact<Self>; 8] = [
            Self::group_facts,
            Self::consumer_facts,
            Self::classic_generations_grow,
            Self::owned_generation_formed,
            Self::tubemq_server_single_owner,
            Self::manual_single_owner,
            Self::one_consumer_per_generation,
            Self::member_states_reported,
        ];
        first_broken(self, &facts)
    }

    /// Asserts every fact of the world (the run loop, after every event in debug builds and
    /// tests); the panic names the fact that broke.
    pub(crate) fn check_invariants(&self) {
        assert_holds(self.broken());
    }

    /// The coordinator's (or master's) own facts.
    fn group_facts(&self) -> Result<(), Broken> {
        use crate::protocols::Group;
        let broken = match &self.group {
            Group::Classic(g) => g.coord.broken(),
            Group::Kip848(side) => side.coord.broken(),
            Group::TubemqServer(side) => side.master.as_ref().and_then(|m| m.broken()),
            Group::TubemqClient(_) | Group::Manual(_) => None,
        };
        broken.map_or(Ok(()), Err)
    }

    /// Every live consumer's own facts (a dead incarnation's state is frozen at its crash).
    fn consumer_facts(&self) -> Result<(), Broken> {
        let live = self.slots.iter().filter_map(|s| s.consumer.as_ref().filter(|c| c.alive()));
        live.filter_map(|c| c.broken()).next().map_or(Ok(()), Err)
    }

    /// `classic.generations_grow`: the classic coordinator's generation never falls below the
    /// last one the world saw.
    fn classic_generations_grow(&self) -> Result<(), Broken> {
        let crate::protocols::Group::Classic(g) = &self.group else { return Ok(()) };
        let generation = g.coord.generation();
        require(generation >= self.last_generation, "classic.generations_grow", || {
            format!("generation {generation} after generation {}", self.last_generation)
        })
    }

    /// `group.owned_generation_formed`: no live member of a group protocol (classic,
    /// KIP-848) owns partitions of a generation (KIP-848: member epoch) the coordinator has
    /// not formed yet.
    fn owned_generation_formed(&self) -> Result<(), Broken> {
        use crate::protocols::Group;
        if !matches!(self.group, Group::Classic(_) | Group::Kip848(_)) {
            return Ok(());
        }
        let formed = self.group.generation();
        for slot in &self.slots {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            let owned = c.owned_generation();
            require(owned <= formed, "group.owned_generation_formed", || {
                format!(
                    "{} owns partitions of generation {owned} but the coordinator is at {formed}",
                    slot.name
                )
            })?;
        }
        Ok(())
    }

    /// `tubemq_server.single_owner`: no partition owned by two live consumers the master
    /// knows (one it already removed, a zombie that has not noticed, is not counted).
    fn tubemq_server_single_owner(&self) -> Result<(), Broken> {
        let crate::protocols::Group::TubemqServer(side) = &self.group else { return Ok(()) };
        let counts = |c| side.master.as_ref().is_none_or(|m| m.knows(c));
        self.single_owner("tubemq_server.single_owner", counts)
    }

    /// `manual.single_owner`: no partition owned by two live consumers. (TubeMQ client-side
    /// balance has no such fact: nothing prevents two nodes with one node id from owning the
    /// same partitions; the duplicate consumption shows as `records_reprocessed`.)
    fn manual_single_owner(&self) -> Result<(), Broken> {
        let crate::protocols::Group::Manual(_) = &self.group else { return Ok(()) };
        self.single_owner("manual.single_owner", |_| true)
    }

    /// No partition owned by two live consumers counted by `counts`.
    fn single_owner(
        &self,
        fact: &'static str,
        counts: impl Fn(crate::types::Conn) -> bool,
    ) -> Result<(), Broken> {
        let mut holders: BTreeMap<Tp, &str> = BTreeMap::new();
        for slot in &self.slots {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            if !counts(c.conn()) {
                continue;
            }
            for tp in c.owned() {
                let other = holders.insert(tp, &slot.name);
                require(other.is_none(), fact, || {
                    format!("partition {tp:?} owned by {} and {other:?}", slot.name)
                })?;
            }
        }
        Ok(())
    }

    /// `world.one_consumer_per_generation`: no partition is owned by two live consumers with
    /// partitions of the same generation.
    fn one_consumer_per_generation(&self) -> Result<(), Broken> {
        let mut holders: BTreeMap<(Tp, i32), &str> = BTreeMap::new();
        for slot in &self.slots {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            let generation = c.owned_generation();
            if generation < 0 {
                continue;
            }
            for tp in c.owned() {
                let other = holders.insert((tp, generation), &slot.name);
                require(other.is_none(), "world.one_consumer_per_generation", || {
                    format!(
                        "partition {tp:?} consumed by {} and {other:?} in generation {generation}",
                        slot.name
                    )
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumer::{Consumer, ConsumerParams, Phase, RebalanceMode};
    use crate::processing::ProcessingSampler;
    use crate::types::Conn;
    use assignors::AssignorName;
    use scenario::{Client, CommitPolicy, OffsetReset};
    use sim_core::SimTime;

    fn consumer(mode: RebalanceMode) -> Consumer {
        let t = SimTime::from_millis;
        let params = ConsumerParams {
            mode,
            assignor: AssignorName::Range,
            client: Client::Java,
            commit: CommitPolicy::Auto,
            enable_auto_commit: true,
            auto_commit_interval: t(5000),
            session_timeout: t(10_000),
            heartbeat_interval: t(3000),
            max_poll_interval: t(300_000),
            max_poll_records: 500,
            fetch_max_wait: t(500),
            offset_reset: OffsetReset::Earliest,
            one_way: t(1),
            processing: ProcessingSampler::Constant(SimTime::ZERO),
            static_membership: false,
            metadata_refresh: t(300_000),
            rebalance_listener: true,
            shared_client_id: None,
        };
        Consumer::new(Conn { slot: 0, incarnation: 1 }, "c0".into(), params)
    }

    /// Each consumer fact names a hand-broken consumer; a dead incarnation has none.
    #[test]
    fn a_broken_consumer_is_named_by_the_fact_it_breaks() {
        let fresh = consumer(RebalanceMode::Eager);
        assert_eq!(fresh.broken(), None);
        let mut stable_without_id = fresh.clone();
        stable_without_id.phase = Phase::Stable;
        let b = stable_without_id.broken().expect("Stable without a member id");
        assert_eq!(b.fact, "consumer.generation_has_member_id");
        assert_eq!(b.detail, "c0: phase Stable without a member id");
        stable_without_id.alive = false;
        assert_eq!(stable_without_id.broken(), None, "a dead incarnation is frozen");
        let mut groupless = consumer(RebalanceMode::Eager);
        groupless.membership = crate::protocols::Membership::Assigned(Default::default());
        assert_eq!(groupless.broken(), None);
        groupless.phase = Phase::Joining;
        let b = groupless.broken().expect("a groupless member joining");
        assert_eq!(b.fact, "consumer.groupless_stays_unjoined");
        groupless.member_id = Some("c0-1".into());
        let b = groupless.broken().expect("a groupless member with an id");
        assert_eq!(b.fact, "consumer.groupless_has_no_member_id", "the earlier fact first");
    }

    #[test]
    #[should_panic(
        expected = "invariant consumer.generation_has_member_id broken: c0: phase Syncing"
    )]
    fn check_invariants_panics_naming_the_fact() {
        let mut c = consumer(RebalanceMode::Cooperative);
        c.phase = Phase::Syncing;
        c.check_invariants();
    }

    #[test]
    fn the_first_broken_fact_is_reported() {
        let facts: [Fact<u32>; 3] = [
            |n| require(*n > 0, "n.positive", || "zero".into()),
            |n| require(*n % 2 == 0, "n.even", || format!("{n} is odd")),
            |n| require(*n < 10, "n.small", || format!("{n} is large")),
        ];
        assert_eq!(first_broken(&4, &facts), None);
        let b = first_broken(&11, &facts).expect("11 is odd and large");
        assert_eq!((b.fact, b.detail.as_str()), ("n.even", "11 is odd"));
        assert_eq!(b.to_string(), "n.even: 11 is odd");
    }
}
