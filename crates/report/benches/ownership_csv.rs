//! Writing `ownership.csv`: 400,000 rows shaped like the large rolling-restart scenario's
//! (`eager,range,false,t1,891,101.0555,101.06,,idle`: 1,000 partitions of 400 rows, owners
//! `c0`..`c999`, times of whole 0.1 ms, each row starting where the one before ended, a third of the rows unowned), into a sink, by
//! the fast writer (`write_ownership_csv`) and by csv's serde path on the borrowed rows (what
//! `write_rows_atomic` does). `cargo bench -p report --bench ownership_csv`.
// criterion_group! generates undocumented functions.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use metrics::{Columns, OwnershipLog, OwnershipRow, OwnershipRowRef, RunReport};
use std::io;

const PARTITIONS: u32 = 1_000;
const ROWS_PER_PARTITION: u32 = 400;
const STATES: [&str; 3] = ["consuming", "idle", "stop-the-world"];

/// One report holding the rows described in the module documentation.
fn report() -> RunReport {
    let rows = (0..PARTITIONS).flat_map(|partition| {
        (0..ROWS_PER_PARTITION).map(move |i| {
            // Seconds from whole 0.1 ms ticks, as the simulator's times are; each row starts
            // where the row before it ended.
            let tick_s = |k: u32| f64::from(k * 30_005 + partition) / 1e4;
            OwnershipRow {
                protocol: "eager".into(),
                assignor: "range".into(),
                static_membership: false,
                topic: "t1".into(),
                partition,
                start_s: tick_s(i),
                end_s: tick_s(i + 1),
                owner: if i % 3 == 0 { format!("c{partition}") } else { String::new() },
                state: STATES[(i % 3) as usize].into(),
            }
        })
    });
    RunReport { ownership: OwnershipLog::from_rows(rows).unwrap(), ..RunReport::default() }
}

/// csv's serde path, as `write_rows_atomic` runs it (without the file).
fn write_serde(reports: &[RunReport]) -> io::Result<()> {
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(io::sink());
    writer.write_record(OwnershipRowRef::COLUMNS)?;
    for row in reports.iter().flat_map(|r| r.ownership.iter()) {
        writer.serialize(row)?;
    }
    writer.flush()
}

fn bench(c: &mut Criterion) {
    let reports = [report()];
    let mut group = c.benchmark_group("ownership_csv");
    group.sample_size(10);
    group.throughput(Throughput::Elements(u64::from(PARTITIONS * ROWS_PER_PARTITION)));
    group.bench_function("fast", |b| {
        b.iter(|| report::csv_out::write_ownership_csv(io::sink(), &reports).unwrap())
    });
    group.bench_function("serde", |b| b.iter(|| write_serde(&reports).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
