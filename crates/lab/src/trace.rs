//! One protocol run with its Perfetto trace (`run --trace`): the run of [`crate::run_protocol_stepped`]
//! with a [`report::perfetto::TraceWriter`] beside the collector, fed by the same observations
//! and by a probe of the world (which changes nothing in the run: the report is the same).

use crate::single::run_labels;
use crate::RunError;
use metrics::{Collector, RunReport};
use model::Stepping;
use report::perfetto::{Tee, TraceStats, TraceWriter};
use scenario::{ProtocolSpec, Scenario};
use std::cell::RefCell;
use std::io::{self, Write};

/// Runs `scenario` under `protocol` as [`crate::run_protocol_stepped`] does, writing its trace
/// into `trace` as it runs. Returns the report and, once the trace is finished, its output
/// and what it holds (or the error writing it).
pub fn run_protocol_traced<W: Write>(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
    trace: TraceWriter<W>,
) -> Result<(RunReport, io::Result<(W, TraceStats)>), RunError> {
    let mut collector = Collector::new(run_labels(scenario, protocol, seed));
    let cell = RefCell::new(trace);
    let stats = {
        let mut trace_observer = TraceWriter::observer(&cell);
        let mut probe = TraceWriter::probe(&cell);
        let mut tee = Tee { first: &mut collector, second: &mut trace_observer };
        model::simulate_stepped(scenario, protocol, seed, stepping, &mut tee, &mut probe)
    };
    if stats.hit_event_limit {
        return Err(RunError::EventLimit { protocol: protocol.to_string(), events: stats.events });
    }
    let report = collector.finish();
    let written = cell.into_inner().finish(&report);
    Ok((report, written))
}
