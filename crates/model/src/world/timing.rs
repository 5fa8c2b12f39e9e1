//! The seeded variation of when things happen (`[timing]`, `[network] rtt_p99`; docs/timing.md):
//! when a member process starts after its moment, when a scripted event falls after its `at`,
//! and how long each group-protocol message takes on its way.
//!
//! Each draw comes from a named stream of its own, so that adding one never shifts another and
//! the draws of one member never depend on what others do: a member's start offsets from
//! `("start/<name>")` in the order of its starts, an event's jitter from `("event", index)`,
//! the heartbeat send delays of the member in slot `s` from `("heartbeat", s)`,
//! the messages of the member in slot `s` from `("net-up", s)` (to the coordinator) and
//! `("net-down", s)` (from it) in the order they are sent. Messages on one link keep their order
//! (a TCP connection is FIFO): a message never arrives before the one sent before it. With
//! `exact` timing nothing is drawn and every delay is today's fixed `rtt / 2`, so the
//! lock-step runs of hand-derived tests are unchanged.

use rand::Rng;
use rand_distr::{Distribution, LogNormal};
use scenario::{NetworkSpec, TimingSpec};
use sim_core::{RngStreams, SimRng, SimTime};
use std::collections::BTreeMap;

/// z of the 99th percentile of a standard normal.
const Z_P99: f64 = 2.326_347_874_040_841;

/// The start offsets and event jitters of one run.
pub(crate) struct Timing {
    streams: RngStreams,
    spec: TimingSpec,
    /// Per member name, the stream of its start offsets (made at its first start).
    starts: BTreeMap<String, SimRng>,
    /// Per slot, the stream of its heartbeats' send delays.
    heartbeats: Vec<SimRng>,
    /// The group-protocol links.
    pub(crate) net: Network,
}

impl Timing {
    pub(crate) fn new(spec: TimingSpec, network: NetworkSpec, streams: RngStreams) -> Timing {
        // Exact timing: a tail-less network, every hop `rtt / 2`.
        let network =
            if spec.exact { NetworkSpec { rtt_p99: network.rtt, ..network } } else { network };
        let net = Network::new(network, streams);
        Timing { streams, spec, starts: BTreeMap::new(), heartbeats: Vec::new(), net }
    }

    /// Whether a start may fall after its moment.
    pub(crate) fn varies_starts(&self) -> bool {
        !self.spec.exact
            && (self.spec.start_spread > SimTime::ZERO || self.spec.start_delay > SimTime::ZERO)
    }

    /// When the process of member `name`, due at `moment`, really starts: `moment +
    /// start_delay + U[0, start_spread)`.
    pub(crate) fn start_at(&mut self, name: &str, moment: SimTime) -> SimTime {
        if self.spec.exact {
            return moment;
        }
        let spread = self.spec.start_spread.as_nanos();
        let offset = if spread == 0 {
            0
        } else {
            let streams = self.streams;
            let rng = self
                .starts
                .entry(name.to_string())
                .or_insert_with(|| streams.stream(&format!("start/{name}")));
            rng.random_range(0..spread)
        };
        moment + self.spec.start_delay + SimTime::from_nanos(offset)
    }

    /// When the heartbeat of the member in `slot` whose timer expires at `due` leaves:
    /// `due + U[0, heartbeat_jitter)`.
    pub(crate) fn heartbeat_at(&mut self, slot: usize, due: SimTime) -> SimTime {
        let width = self.spec.heartbeat_jitter.as_nanos();
        if self.spec.exact || width == 0 {
            return due;
        }
        while self.heartbeats.len() <= slot {
            let rng = self.streams.indexed("heartbeat", self.heartbeats.len() as u64);
            self.heartbeats.push(rng);
        }
        due + SimTime::from_nanos(self.heartbeats[slot].random_range(0..width))
    }

    /// When scripted event `index`, written for `at`, falls: `at + U[0, event_jitter)`, kept
    /// before `end` (a jitter never pushes an event out of the run).
    pub(crate) fn event_at(&self, index: usize, at: SimTime, end: SimTime) -> SimTime {
        let width = self.spec.event_jitter.as_nanos().min(end.saturating_sub(at).as_nanos());
        if self.spec.exact || width == 0 {
            return at;
        }
        let mut rng = self.streams.indexed("event", index as u64);
        at + SimTime::from_nanos(rng.random_range(0..width))
    }
}

/// One direction of one member's connection: its delay stream and its last arrival (FIFO).
struct Link {
    rng: SimRng,
    last: SimTime,
}

/// The group protocol's messages between members and the coordinator.
pub(crate) struct Network {
    one_way: SimTime,
    /// The one-way delay's distribution, in units of `one_way` (median 1); `None`: fixed.
    tail: Option<LogNormal<f64>>,
    streams: RngStreams,
    /// Member -> coordinator, by slot.
    up: Vec<Link>,
    /// Coordinator -> member, by slot.
    down: Vec<Link>,
}

impl Network {
    fn new(spec: NetworkSpec, streams: RngStreams) -> Network {
        let one_way = SimTime::from_nanos(spec.rtt.as_nanos() / 2);
        // Median 1 (mu = 0); p99 / median = rtt_p99 / rtt = exp(sigma * z99).
        let ratio = spec.rtt_p99.as_nanos() as f64 / spec.rtt.as_nanos().max(1) as f64;
        let tail = (ratio > 1.0 && one_way > SimTime::ZERO)
            .then(|| LogNormal::new(0.0, ratio.ln() / Z_P99).expect("a finite sigma"));
        Network { one_way, tail, streams, up: Vec::new(), down: Vec::new() }
    }

    /// When a message the member in `slot` sends at `now` reaches the coordinator.
    pub(crate) fn arrival_at_coord(&mut self, slot: usize, now: SimTime) -> SimTime {
        let (tail, one_way, streams) = (self.tail, self.one_way, self.streams);
        arrival(&mut self.up, "net-up", slot, now, one_way, tail, streams)
    }

    /// When a message the coordinator sends at `now` reaches the member in `slot`.
    pub(crate) fn arrival_at_member(&mut self, slot: usize, now: SimTime) -> SimTime {
        let (tail, one_way, streams) = (self.tail, self.one_way, self.streams);
        arrival(&mut self.down, "net-down", slot, now, one_way, tail, streams)
    }
}

/// The arrival on `links[slot]` of a message sent at `now`: `now` + a delay drawn from the
/// link's stream, never before the link's previous arrival.
fn arrival(
    links: &mut Vec<Link>,
    family: &str,
    slot: usize,
    now: SimTime,
    one_way: SimTime,
    tail: Option<LogNormal<f64>>,
    streams: RngStreams,
) -> SimTime {
    let Some(tail) = tail else { return now + one_way };
    while links.len() <= slot {
        let rng = streams.indexed(family, links.len() as u64);
        links.push(Link { rng, last: SimTime::ZERO });
    }
    let link = &mut links[slot];
    let factor = tail.sample(&mut link.rng);
    // Rounded to whole nanoseconds; the factor is finite and positive, and bounded in practice
    // (p99 at most 100 x the median: sigma <= 1.98).
    let delay = SimTime::from_nanos((one_way.as_nanos() as f64 * factor).round() as u64);
    let at = (now + delay).max(link.last);
    link.last = at;
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varied(spread_ms: u64, jitter_ms: u64) -> TimingSpec {
        TimingSpec {
            exact: false,
            start_delay: SimTime::from_millis(100),
            start_spread: SimTime::from_millis(spread_ms),
            event_jitter: SimTime::from_millis(jitter_ms),
            heartbeat_jitter: SimTime::from_millis(10),
        }
    }

    fn net(rtt_ms: u64, p99_ms: u64) -> NetworkSpec {
        NetworkSpec { rtt: SimTime::from_millis(rtt_ms), rtt_p99: SimTime::from_millis(p99_ms) }
    }

    #[test]
    fn exact_timing_draws_nothing_and_keeps_rtt_over_two() {
        let mut t = Timing::new(TimingSpec::exact(), net(2, 8), RngStreams::new(1));
        let at = SimTime::from_secs(5);
        assert_eq!(t.start_at("c0", at), at);
        assert_eq!(t.event_at(0, at, SimTime::from_secs(60)), at);
        for _ in 0..100 {
            assert_eq!(t.net.arrival_at_coord(0, at), at + SimTime::from_millis(1));
            assert_eq!(t.net.arrival_at_member(3, at), at + SimTime::from_millis(1));
        }
    }

    #[test]
    fn a_start_falls_in_delay_plus_spread_and_depends_only_on_the_member() {
        let spec = varied(500, 0);
        let mut a = Timing::new(spec, net(1, 1), RngStreams::new(7));
        let mut b = Timing::new(spec, net(1, 1), RngStreams::new(7));
        let moment = SimTime::from_secs(60);
        // b draws for another member first: c3's offsets do not move.
        b.start_at("c1", moment);
        b.start_at("c1", moment);
        for _ in 0..50 {
            let x = a.start_at("c3", moment);
            assert_eq!(x, b.start_at("c3", moment));
            assert!(x >= moment + SimTime::from_millis(100), "{x}");
            assert!(x < moment + SimTime::from_millis(600), "{x}");
        }
    }

    #[test]
    fn start_offsets_are_uniform_over_the_spread() {
        // 10,000 draws of U[0, 1000 ms): each tenth of the spread holds 1,000 +- 4 sigma (120).
        let mut t = Timing::new(varied(1000, 0), net(1, 1), RngStreams::new(3));
        let mut bins = [0u32; 10];
        for _ in 0..10_000 {
            let ms = (t.start_at("c0", SimTime::ZERO) - SimTime::from_millis(100)).as_millis();
            bins[(ms / 100) as usize] += 1;
        }
        assert!(bins.iter().all(|n| (880..=1120).contains(n)), "{bins:?}");
    }

    #[test]
    fn an_event_jitter_stays_inside_its_width_and_the_run() {
        let t = Timing::new(varied(0, 1000), net(1, 1), RngStreams::new(5));
        let end = SimTime::from_secs(30);
        for i in 0..200 {
            let at = t.event_at(i, SimTime::from_secs(10), end);
            assert!(at >= SimTime::from_secs(10) && at < SimTime::from_secs(11), "{at}");
        }
        // 0.3 s before the end: the jitter is cut to 0.3 s.
        for i in 0..200 {
            let at = t.event_at(i, SimTime::from_millis(29_700), end);
            assert!(at < end, "{at}");
        }
        // The same index gives the same time; another index another one.
        assert_eq!(
            t.event_at(4, SimTime::from_secs(10), end),
            t.event_at(4, SimTime::from_secs(10), end)
        );
        assert_ne!(
            t.event_at(4, SimTime::from_secs(10), end),
            t.event_at(5, SimTime::from_secs(10), end)
        );
    }

    #[test]
    fn network_delays_have_the_asked_median_and_p99_and_keep_fifo_order() {
        // rtt 2 ms, rtt_p99 8 ms: one-way median 1 ms, p99 4 ms.
        let mut t = Timing::new(varied(0, 0), net(2, 8), RngStreams::new(11));
        let mut delays = Vec::new();
        let mut last = SimTime::ZERO;
        for i in 0..20_000u64 {
            // Sent 10 s apart: the FIFO rule never binds, each delay is a pure draw.
            let now = SimTime::from_secs(10 * i);
            let at = t.net.arrival_at_coord(2, now);
            assert!(at >= last);
            last = at;
            delays.push((at - now).as_nanos());
        }
        delays.sort_unstable();
        let median = delays[delays.len() / 2] as f64 / 1e6;
        let p99 = delays[delays.len() * 99 / 100] as f64 / 1e6;
        assert!((0.95..1.05).contains(&median), "median {median} ms");
        assert!((3.6..4.4).contains(&p99), "p99 {p99} ms");
        // Sent at the same instant, messages arrive in the order sent.
        let now = SimTime::from_secs(1_000_000);
        let arrivals: Vec<SimTime> = (0..1000).map(|_| t.net.arrival_at_member(0, now)).collect();
        assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
        assert!(arrivals.iter().all(|a| *a > now));
    }

    #[test]
    fn links_draw_independently() {
        let mut a = Timing::new(varied(0, 0), net(2, 8), RngStreams::new(1));
        let mut b = Timing::new(varied(0, 0), net(2, 8), RngStreams::new(1));
        let now = SimTime::from_secs(1);
        for _ in 0..10 {
            b.net.arrival_at_coord(0, now);
            b.net.arrival_at_member(1, now);
        }
        let xs: Vec<SimTime> = (0..10).map(|i| a.net.arrival_at_coord(1, now * (i + 2))).collect();
        let ys: Vec<SimTime> = (0..10).map(|i| b.net.arrival_at_coord(1, now * (i + 2))).collect();
        assert_eq!(xs, ys, "slot 1's uplink does not see slot 0's or the downlinks' draws");
    }
}
