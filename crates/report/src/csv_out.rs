//! Writes and reads the run output CSV files. Every file is written to a temporary file in the
//! same folder and renamed into place, so a reader never sees half a file and an interrupted
//! run leaves no partial output.

use crate::direct_write::BlockWriter;
use crate::row_buffer::{RowBuffer, RowSink};
use metrics::{
    Columns, OwnershipInterval, OwnershipLog, OwnershipLogBuilder, OwnershipRow, PartitionRow,
    RebalanceRow, RunReport, SummaryRow, TimelineRow,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

/// File names of the run outputs (DESIGN section 7).
pub const SUMMARY_CSV: &str = "summary.csv";
/// Per-partition totals.
pub const PARTITIONS_CSV: &str = "partitions.csv";
/// One row per rebalance.
pub const REBALANCES_CSV: &str = "rebalances.csv";
/// Ownership intervals.
pub const OWNERSHIP_CSV: &str = "ownership.csv";
/// Sampled time series.
pub const TIMELINE_CSV: &str = "timeline.csv";

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, synced, renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    set_readable_by_all(tmp.as_file())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Temporary files are created owner-only (0600); outputs are ordinary files (0644).
#[cfg(unix)]
pub(crate) fn set_readable_by_all(file: &std::fs::File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
pub(crate) fn set_readable_by_all(_file: &std::fs::File) -> io::Result<()> {
    Ok(())
}

/// Serialises rows as CSV with a header line (the header is written even with no rows).
pub fn to_csv_bytes<T: Serialize + Columns>(rows: &[T]) -> io::Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    writer.write_record(T::COLUMNS)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.into_inner().map_err(|e| io::Error::other(e.to_string()))
}

/// Writes the five CSV files of a `run` for all its protocol runs into `dir`. Rows are
/// streamed into each file (no copy of a report's rows, no whole file in memory: a large run's
/// ownership timeline can hold tens of millions of rows, written from its compact log by
/// [`write_ownership_atomic`] without allocating per row).
pub fn write_run_outputs(dir: &Path, reports: &[RunReport]) -> io::Result<()> {
    let summaries = reports.iter().filter_map(|r| r.summary.as_ref());
    write_rows_atomic(&dir.join(SUMMARY_CSV), summaries)?;
    write_rows_atomic(&dir.join(PARTITIONS_CSV), reports.iter().flat_map(|r| &r.partitions))?;
    write_rows_atomic(&dir.join(REBALANCES_CSV), reports.iter().flat_map(|r| &r.rebalances))?;
    write_ownership_atomic(&dir.join(OWNERSHIP_CSV), reports)?;
    write_rows_atomic(&dir.join(TIMELINE_CSV), reports.iter().flat_map(|r| &r.timeline))?;
    Ok(())
}

/// Writes `rows` (rows, references to rows or borrowed rows) as CSV with a header line to
/// `path` atomically (as [`write_atomic`]), serialising them one by one into the temporary file.
pub fn write_rows_atomic<T: Serialize + Columns>(
    path: &Path,
    rows: impl Iterator<Item = T>,
) -> io::Result<()> {
    write_streamed_atomic(path, |out| {
        let mut writer = csv_writer(out);
        writer.write_record(T::COLUMNS)?;
        for row in rows {
            writer.serialize(row)?;
        }
        writer.flush()
    })
}

/// The configuration of every CSV writer here (csv's defaults: `,`, quotes only where needed,
/// `\n` after each record), with the header written by hand.
fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new().has_headers(false).from_writer(out)
}

/// Writes a file atomically (as [`write_atomic`]) whose bytes `write` streams into a temporary
/// file, whole blocks past the page cache where allowed (`direct_write.rs`).
fn write_streamed_atomic(
    path: &Path,
    write: impl FnOnce(&mut BlockWriter) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut blocks = BlockWriter::new(tmp.reopen()?, tmp.path());
    write(&mut blocks)?;
    blocks.finish()?.sync_all()?;
    set_readable_by_all(tmp.as_file())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes the ownership rows of all `reports` to `path` atomically (as [`write_atomic`]): the
/// bytes [`write_rows_atomic`] writes for `reports.iter().flat_map(|r| r.ownership.iter())`,
/// several times faster (see [`write_ownership_csv`]).
pub fn write_ownership_atomic(path: &Path, reports: &[RunReport]) -> io::Result<()> {
    write_streamed_atomic(path, |blocks| write_ownership_rows(blocks, reports))
}

/// Writes `ownership.csv` (header and the ownership rows of all `reports`) to `out`, byte for
/// byte as csv's serde path writes the borrowed rows, but many times faster (a large run has
/// tens of millions of rows). Each row is assembled from texts rendered beforehand: the labels,
/// topic and partition of a segment, and the owner and the state by their codes in the log,
/// all rendered by csv itself; only the times are formatted per row, as csv's serde serializer
/// formats an `f64` (`ryu::Buffer::format`, csv 1.4 `serializer.rs`). The pieces are copied
/// with fixed-size copies into a buffer ([`write_ownership_atomic`] formats them straight into
/// the file's blocks).
pub fn write_ownership_csv(out: impl Write, reports: &[RunReport]) -> io::Result<()> {
    let mut sink = WriteSink::new(out);
    write_ownership_rows(&mut sink, reports)?;
    sink.out.write_all(sink.buffer.text())
}

/// Appends the bytes of [`write_ownership_csv`] to `sink`'s buffer, passing them on chunk by
/// chunk; the last bytes are left in the buffer.
fn write_ownership_rows<S: RowSink>(sink: &mut S, reports: &[RunReport]) -> io::Result<()> {
    let mut header = csv_writer(Vec::new());
    header.write_record(OwnershipRow::COLUMNS)?;
    sink.buffer().put_slice(&header.into_inner().map_err(|e| io::Error::other(e.to_string()))?);
    let mut times = TimeText::default();
    for log in reports.iter().map(|r| &r.ownership) {
        let names = NameTexts::new(log)?;
        for segment in log.segments() {
            let Some(first) = segment.iter().next() else { continue };
            let prefix = FieldText::<64>::new(&segment_prefix(&first)?);
            for interval in segment.intervals() {
                let buf = sink.buffer();
                prefix.put(buf);
                times.put_start(buf, interval.start_s());
                times.put_end(buf, interval.end_s());
                names.owner(interval).put(buf);
                names.state(interval).put(buf);
                if buf.text_len() >= S::CHUNK {
                    sink.pass_on()?;
                }
            }
        }
    }
    Ok(())
}

/// A [`RowSink`] passing its chunks on to a `Write`.
struct WriteSink<W> {
    out: W,
    buffer: RowBuffer,
}

impl<W: Write> WriteSink<W> {
    /// A sink into `out` whose buffer has room for a chunk and a row of the usual kind.
    fn new(out: W) -> WriteSink<W> {
        WriteSink { out, buffer: RowBuffer::with_capacity(Self::CHUNK + (1 << 10)) }
    }
}

impl<W: Write> RowSink for WriteSink<W> {
    const CHUNK: usize = 1 << 20;

    #[inline]
    fn buffer(&mut self) -> &mut RowBuffer {
        &mut self.buffer
    }

    fn pass_on(&mut self) -> io::Result<()> {
        self.out.write_all(self.buffer.text())?;
        self.buffer.consume(self.buffer.text_len());
        Ok(())
    }
}

/// Bytes appended to every row of a kind (a segment's first columns, an owner, a state):
/// inline in an `N`-byte window when they fit, copied whole (`RowBuffer::put_fixed`); on the
/// heap otherwise.
enum FieldText<const N: usize> {
    /// `len <= N` bytes at the front of `window`, zeros after them.
    Short { window: [u8; N], len: usize },
    /// Longer bytes.
    Long(Box<[u8]>),
}

impl<const N: usize> FieldText<N> {
    /// Appends the text to `buf`.
    #[inline]
    fn put(&self, buf: &mut RowBuffer) {
        match self {
            FieldText::Short { window, len } => buf.put_fixed(window, *len),
            FieldText::Long(bytes) => buf.put_slice(bytes),
        }
    }

    /// The text `bytes`.
    fn new(bytes: &[u8]) -> FieldText<N> {
        if bytes.len() <= N {
            let mut window = [0; N];
            window[..bytes.len()].copy_from_slice(bytes);
            FieldText::Short { window, len: bytes.len() }
        } else {
            FieldText::Long(bytes.into())
        }
    }
}

/// The rendered owner and state columns of one log's rows, by code: each owner with the
/// delimiter after it (slot 0 the empty owner, slot `i + 1` owner index `i`), each state with
/// the record terminator.
struct NameTexts {
    owners: Vec<FieldText<32>>,
    states: Vec<FieldText<32>>,
}

impl NameTexts {
    /// The texts of `log`'s owner and state names.
    fn new(log: &OwnershipLog) -> io::Result<NameTexts> {
        let rendered = |field: &str, end: u8| {
            let mut text = field_bytes(field)?;
            text.push(end);
            Ok::<_, io::Error>(FieldText::new(&text))
        };
        let owner_names = std::iter::once("").chain(log.owner_names().iter().map(String::as_str));
        let owners = owner_names.map(|owner| rendered(owner, b',')).collect::<Result<_, _>>()?;
        let states =
            log.state_names().map(|state| rendered(state, b'\n')).collect::<Result<_, _>>()?;
        Ok(NameTexts { owners, states })
    }

    /// The owner column of `interval` and the delimiter after it.
    #[inline]
    fn owner(&self, interval: &OwnershipInterval) -> &FieldText<32> {
        &self.owners[interval.owner_index().map_or(0, |i| i + 1)]
    }

    /// The state column of `interval` and the record terminator.
    #[inline]
    fn state(&self, interval: &OwnershipInterval) -> &FieldText<32> {
        &self.states[usize::from(interval.state_code())]
    }
}

/// Formats times as csv's serde serializer does (`ryu::Buffer::format`, by [`SecondsText`]),
/// each with the delimiter after it, remembering the text of the last end time: a row usually
/// starts where the one before it ended, and the same bits format to the same text, so most
/// start times are copied instead of formatted again.
struct TimeText {
    format: SecondsText,
    /// The bits of the last end time (at first those of `0.0`, with its text).
    last_end: u64,
    /// The last end time's text and delimiter, and their length.
    last_text: [u8; TIME_WINDOW],
    last_len: usize,
}

impl Default for TimeText {
    fn default() -> TimeText {
        let mut format = SecondsText::default();
        let (window, last_len) = format.field(0.0);
        let last_text = *window;
        TimeText { format, last_end: 0.0f64.to_bits(), last_text, last_len }
    }
}

impl TimeText {
    /// Appends the text of a start time and a delimiter to `buf`.
    #[inline]
    fn put_start(&mut self, buf: &mut RowBuffer, start_s: f64) {
        if self.last_end == start_s.to_bits() {
            buf.put_fixed(&self.last_text, self.last_len);
        } else {
            let (window, len) = self.format.field(start_s);
            buf.put_fixed(window, len);
        }
    }

    /// Appends the text of an end time and a delimiter to `buf`, and remembers them.
    #[inline]
    fn put_end(&mut self, buf: &mut RowBuffer, end_s: f64) {
        let (window, len) = self.format.field(end_s);
        buf.put_fixed(window, len);
        self.last_text = *window;
        self.last_len = len;
        self.last_end = end_s.to_bits();
    }
}

/// The longest text `ryu::Buffer::format` writes for an `f64` (`-1.2345678901234567e-308`;
/// ryu's buffer holds 24 bytes).
const RYU_MAX_LEN: usize = 24;

/// The window a time's text and its delimiter are copied in.
const TIME_WINDOW: usize = 32;
const _: () = assert!(TIME_WINDOW > RYU_MAX_LEN, "ryu's text and a delimiter fit the window");

/// Formats an `f64` to exactly the text of `ryu::Buffer::format`, faster for the simulator's
/// times: seconds made from whole nanoseconds (`SimTime::as_secs_f64`, `nanos as f64 / 1e9`).
///
/// Fast path: for finite `0 <= x < 2^23` (97 days), `n = round(x * 1e9)` is taken (by
/// [`split_nanos`], which finds it for every whole number of nanoseconds), and used
/// only if `n as f64 / 1e9` has the bits of `x`, i.e. the decimal `D = n / 10^9` rounds to `x`
/// (`n < 2^23 * 10^9 < 2^53` is exact as an `f64` and IEEE division rounds correctly, as
/// `as_secs_f64` computes it). The text is then `D` with its trailing zeros trimmed. Why this
/// is ryu's output (the shortest decimal rounding to `x`, the closest one if several are
/// shortest; ryu 1.0 `d2s.rs`):
/// - Let `D` have `k` significant digits, the last at `10^q` (`q >= -9`). Any other decimal
///   of at most `k` significant digits is at least `10^q` from `D`: one at `D`'s leading
///   position or above is a multiple of `10^q`; one below `D`'s leading power `10^p` (when
///   `D > 10^p`, so `D >= 10^p + 10^q`) is a multiple of `10^(q-1)` below `10^p`, so more than
///   `10^q` away; when `D = 10^p`, one below has at most one digit, so is at most `0.9 D`.
/// - All decimals rounding to `x` lie within an interval of width at most `ulp(x)`, and
///   `ulp(x) <= 2^-30 < 10^-9 <= 10^q` for `x < 2^23` (and `ulp(x) < 0.1 x`). So `D` is the
///   only decimal of at most `k` digits that rounds to `x`: ryu writes `D`'s digits.
/// - Layout (ryu 1.0 `pretty/mod.rs` `format64`): for `10^(kk-1) <= D < 10^kk`, ryu writes
///   `D` positionally when `-5 < kk <= 16`: `I.0` for a whole `D`, `I.fff` (`I` may be `0`,
///   the fraction then may start with zeros) otherwise. `D < 2^23` has `kk <= 7`; `kk > -5`
///   means `D >= 10^-5`, i.e. `n >= 10^4`. `n = 0` is `+0.0`, written `0.0` by ryu.
///
/// Otherwise (negative, `-0.0`, `n < 10^4`, `x >= 2^23`, not a whole number of nanoseconds,
/// NaN, infinite) ryu formats `x`.
struct SecondsText {
    ryu: ryu::Buffer,
    /// The text: on the fast path the whole seconds (eight digits, leading zeros included)
    /// end at `DOT`, the fraction follows; room after it for a whole window from any start.
    text: [u8; DOT + TIME_WINDOW],
}

impl Default for SecondsText {
    fn default() -> SecondsText {
        SecondsText { ryu: ryu::Buffer::new(), text: [0; DOT + TIME_WINDOW] }
    }
}

/// Where [`SecondsText`]'s fast path puts the decimal point (the whole seconds, below `2^23`,
/// have at most 7 digits; they are written as 8).
const DOT: usize = 8;

/// `b'0'` in each byte.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

impl SecondsText {
    /// The text of `x`, byte for byte `ryu::Buffer::format(x)`, followed by a `,`, at the front
    /// of a window, and its length (the `,` included).
    #[inline(always)]
    fn field(&mut self, x: f64) -> (&[u8; TIME_WINDOW], usize) {
        let (start, end) = match split_nanos(x) {
            Some((whole_s, frac_ns)) => self.write_nanos(whole_s, frac_ns),
            None => self.write_ryu(x),
        };
        self.text[end] = b',';
        let window = self.text[start..start + TIME_WINDOW].try_into().expect("a whole window");
        (window, end + 1 - start)
    }

    /// Writes ryu's text of `x` at the front of `text`; returns where it starts and ends.
    #[cold]
    #[inline(never)]
    fn write_ryu(&mut self, x: f64) -> (usize, usize) {
        let formatted = self.ryu.format(x).as_bytes();
        self.text[..formatted.len()].copy_from_slice(formatted);
        (0, formatted.len())
    }

    /// Writes `whole` seconds and `frac` nanoseconds as seconds (`123.45`, `5.0`, `0.00001`)
    /// into `text` and returns where the text starts and ends. `whole` is below `2^23` (at most
    /// 7 digits), `frac` below `10^9`.
    #[inline(always)]
    fn write_nanos(&mut self, whole: u32, frac: u32) -> (usize, usize) {
        // Times of whole 0.1 ms below 10^4 s (the simulator's usual ones): one pass.
        if whole < 10_000 && frac.is_multiple_of(100_000) {
            return self.write_short(whole, frac / 100_000);
        }
        let whole_digits = eight_digits(whole);
        self.text[..DOT].copy_from_slice(&(whole_digits | ASCII_ZEROS).to_le_bytes());
        // The leading zero digits are the zero low bytes; at least one digit is kept.
        let start = (whole_digits.trailing_zeros() / 8).min(DOT as u32 - 1) as usize;
        self.text[DOT] = b'.';
        if frac == 0 {
            self.text[DOT + 1] = b'0';
            return (start, DOT + 2);
        }
        // The first fraction digit, then eight; trailing zeros (the zero high bytes) trimmed.
        let (first, rest) = (frac / 100_000_000, frac % 100_000_000);
        self.text[DOT + 1] = b'0' + first as u8;
        let rest_digits = eight_digits(rest);
        self.text[DOT + 2..DOT + 10].copy_from_slice(&(rest_digits | ASCII_ZEROS).to_le_bytes());
        let end = if rest_digits == 0 {
            DOT + 2 // `first` is not 0, as `frac` is not.
        } else {
            DOT + 10 - (rest_digits.leading_zeros() / 8) as usize
        };
        (start, end)
    }

    /// [`SecondsText::write_nanos`] for `whole` seconds below `10^4` and `tenths_ms` (below
    /// `10^4`) tenths of a millisecond: the eight digits of both at once, the whole seconds'
    /// four (leading zeros skipped, one kept) before the point, the fraction's four (trailing
    /// zeros trimmed, one kept) after it.
    #[inline]
    fn write_short(&mut self, whole: u32, tenths_ms: u32) -> (usize, usize) {
        let digits = eight_digits(whole * 10_000 + tenths_ms);
        let (whole_digits, frac_digits) = (digits as u32, (digits >> 32) as u32);
        self.text[DOT - 4..DOT].copy_from_slice(&(whole_digits | 0x3030_3030).to_le_bytes());
        self.text[DOT] = b'.';
        self.text[DOT + 1..DOT + 5].copy_from_slice(&(frac_digits | 0x3030_3030).to_le_bytes());
        let start = DOT - 4 + (whole_digits.trailing_zeros() / 8).min(3) as usize;
        let end = DOT + 1 + (4 - frac_digits.leading_zeros() / 8).max(1) as usize;
        (start, end)
    }
}

/// The eight decimal digits of `v` (below `10^8`, leading zeros included) as digit values
/// (0 to 9, not ASCII), one per byte, the most significant in the lowest byte (so
/// `to_le_bytes` gives them in reading order). Computed in parallel in the lanes of a `u64`:
/// `v` is split into two halves of four digits (32-bit lanes), each into two pairs (16-bit
/// lanes), each into two digits (bytes); divisions by 100 and 10 by multiplication
/// (`x * 10486 >> 20` is `x / 100` for `x < 10^4`, `x * 103 >> 10` is `x / 10` for `x < 100`),
/// with no carry between lanes (the products stay below `2^27` and `2^14`).
#[inline]
fn eight_digits(v: u32) -> u64 {
    let v = u64::from(v);
    let halves = (v / 10_000) | ((v % 10_000) << 32);
    let hundreds = ((halves * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | ((halves - hundreds * 100) << 16);
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((pairs - tens * 10) << 8)
}

/// The number of nanoseconds `n` whose seconds `n as f64 / 1e9` are `x` (bit for bit), when
/// [`SecondsText`]'s fast path may write them: `n` is 0 or at least `10^4`, `x` below `2^23`;
/// as whole seconds and nanoseconds below `10^9`.
#[inline]
fn split_nanos(x: f64) -> Option<(u32, u32)> {
    /// `2^23` seconds: the bound of the fast path (see [`SecondsText`]).
    const LIMIT_S: f64 = 8_388_608.0;
    // Also false for NaN; `-0.0` passes here and fails the bit comparison.
    if !(0.0..LIMIT_S).contains(&x) {
        return None;
    }
    // The nanoseconds are recovered from the whole seconds and the fraction (`x - whole` is
    // exact). When `n as f64 / 1e9 == x`, `|x - n / 10^9| <= ulp(x) / 2 <= 2^-31 s`, i.e.
    // 0.466 ns, and the product and sum add at most 1.2e-7 ns: the cast rounds to `n`. So
    // every whole number of nanoseconds from 10^4 to below 2^23 s takes the fast path.
    // The casts go through `u32` and `i64`, single instructions on x86-64 (`u64` ones are not):
    // `x < 2^23`, the fraction is below `10^9 + 1` and `n` below `2^53`. When the check passes
    // the fraction is below `10^9` (`10^9` would make `x` the next whole second).
    let whole_s = x as u32;
    let frac_ns = ((x - f64::from(whole_s)) * 1e9 + 0.5) as u32;
    let n = u64::from(whole_s) * 1_000_000_000 + u64::from(frac_ns);
    let exact = (n as i64 as f64 / 1e9).to_bits() == x.to_bits();
    (exact && (n == 0 || n >= 10_000)).then_some((whole_s, frac_ns))
}

/// [`split_nanos`] as one number of nanoseconds.
#[cfg(test)]
fn whole_nanos(x: f64) -> Option<u64> {
    split_nanos(x).map(|(whole_s, frac_ns)| u64::from(whole_s) * 1_000_000_000 + u64::from(frac_ns))
}

/// The bytes csv writes for the first five columns of `row` and the delimiter after them:
/// csv serialises the five and a sixth field `x` (no lone empty field can occur), and the `x`
/// and the terminator are cut off.
fn segment_prefix(row: &metrics::OwnershipRowRef<'_>) -> io::Result<Vec<u8>> {
    let record = (row.protocol, row.assignor, row.static_membership, row.topic, row.partition, "x");
    let bytes = record_bytes(record)?;
    bytes
        .strip_suffix(b"x\n")
        .map(<[u8]>::to_vec)
        .ok_or_else(|| io::Error::other("csv wrote an unexpected record terminator"))
}

/// The bytes csv writes for `field` inside a record of several fields: csv writes a record of
/// a field `x` and `field`, and the `x`, the delimiter and the terminator are cut off.
fn field_bytes(field: &str) -> io::Result<Vec<u8>> {
    let bytes = record_bytes(("x", field))?;
    bytes
        .strip_prefix(b"x,")
        .and_then(|b| b.strip_suffix(b"\n"))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| io::Error::other("csv wrote an unexpected record"))
}

/// The bytes csv writes for `record`, one row without a header.
fn record_bytes(record: impl Serialize) -> io::Result<Vec<u8>> {
    // A small buffer: csv's default (zeroed at every writer) cost more than the prefix itself
    // for the 10,000 partitions of the reference.
    let mut builder = csv::WriterBuilder::new();
    builder.has_headers(false).buffer_capacity(256);
    let mut writer = builder.from_writer(Vec::new());
    writer.serialize(record)?;
    writer.into_inner().map_err(|e| io::Error::other(e.to_string()))
}

/// Reads rows of type `T` from a CSV file with a header.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> io::Result<Vec<T>> {
    let mut reader = csv::Reader::from_path(path)
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    reader
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
}

/// The labels that match rows to a summary row: protocol, assignor, static membership.
type RunKey = (String, String, bool);

/// Reads `ownership.csv` into one compact log per key in `keys`, streaming (rows of other keys
/// are skipped, as [`read_run_outputs`] matches every file's rows to the summaries).
fn read_ownership(path: &Path, keys: &[RunKey]) -> io::Result<BTreeMap<RunKey, OwnershipLog>> {
    let error = |e: &dyn std::fmt::Display| io::Error::other(format!("{}: {e}", path.display()));
    let mut builders: BTreeMap<RunKey, OwnershipLogBuilder> =
        keys.iter().map(|k| (k.clone(), OwnershipLogBuilder::default())).collect();
    let mut reader = csv::Reader::from_path(path).map_err(|e| error(&e))?;
    for row in reader.deserialize::<OwnershipRow>() {
        let row = row.map_err(|e| error(&e))?;
        // Looked up without allocating a key per row.
        let builder = builders.iter_mut().find(|((p, a, s), _)| {
            (p.as_str(), a.as_str(), *s)
                == (row.protocol.as_str(), row.assignor.as_str(), row.static_membership)
        });
        if let Some((_, builder)) = builder {
            builder.push(row).map_err(|e| error(&e))?;
        }
    }
    Ok(builders.into_iter().map(|(k, b)| (k, b.finish())).collect())
}

/// Reads back everything [`write_run_outputs`] wrote, grouped into one report per summary row
/// (matched by protocol, assignor and static membership). `ownership.csv` is streamed into
/// compact logs; a file whose rows cannot form one (see [`metrics::OwnershipLogError`]) is an
/// error naming the file.
pub fn read_run_outputs(dir: &Path) -> io::Result<Vec<RunReport>> {
    let summaries: Vec<SummaryRow> = read_rows(&dir.join(SUMMARY_CSV))?;
    let partitions: Vec<PartitionRow> = read_rows(&dir.join(PARTITIONS_CSV))?;
    let rebalances: Vec<RebalanceRow> = read_rows(&dir.join(REBALANCES_CSV))?;
    let keys: Vec<RunKey> = summaries
        .iter()
        .map(|s| (s.protocol.clone(), s.assignor.clone(), s.static_membership))
        .collect();
    let mut ownership = read_ownership(&dir.join(OWNERSHIP_CSV), &keys)?;
    let timeline: Vec<TimelineRow> = read_rows(&dir.join(TIMELINE_CSV))?;
    let reports = summaries
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let key = (s.protocol.clone(), s.assignor.clone(), s.static_membership);
            // The last summary of a key takes its log; an earlier duplicate gets a copy.
            let log = if keys[i + 1..].contains(&key) {
                ownership.get(&key).cloned()
            } else {
                ownership.remove(&key)
            };
            let same =
                |p: &str, a: &str, st: bool| (p, a, st) == (key.0.as_str(), key.1.as_str(), key.2);
            RunReport {
                partitions: partitions
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                rebalances: rebalances
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                ownership: log.unwrap_or_default(),
                timeline: timeline
                    .iter()
                    .filter(|r| same(&r.protocol, &r.assignor, r.static_membership))
                    .cloned()
                    .collect(),
                summary: Some(s),
            }
        })
        .collect();
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::own;

    fn sample_summary() -> SummaryRow {
        SummaryRow {
            scenario: "s".into(),
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            seed: 1,
            duration_s: 60.0,
            partitions: 3,
            records_produced: 10,
            records_processed: 12,
            records_reprocessed: 2,
            records_lost: 0,
            final_lag: 0,
            downtime_partition_s: 1.5,
            downtime_episode_ms_p50: 500.0,
            downtime_episode_ms_p99: 700.0,
            downtime_episode_ms_max: 700.0,
            stop_the_world_s: 0.25,
            rebalances: 1,
            rebalance_ms_p50: 30.0,
            rebalance_ms_max: 30.0,
            partitions_moved: 2,
            e2e_latency_ms_p50: 1.0,
            e2e_latency_ms_p99: 2.0,
            e2e_latency_ms_max: 3.0,
            events: 99,
            measure_from_s: 0.0,
            startup_downtime_partition_s: 0.0,
            startup_stop_the_world_s: 0.0,
            startup_rebalances: 0,
        }
    }

    /// The fixed header must be exactly what serde would write for the struct, so the two
    /// cannot drift apart.
    #[test]
    fn fixed_header_matches_serde_header() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(sample_summary()).unwrap();
        let serde_bytes = w.into_inner().unwrap();
        let ours = to_csv_bytes(&[sample_summary()]).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde_bytes).unwrap());
    }

    #[test]
    fn empty_rows_still_write_a_header() {
        let bytes = to_csv_bytes::<RebalanceRow>(&[]).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "protocol,assignor,static_membership,index,trigger,start_s,end_s,duration_ms,rounds,members,partitions_moved\n"
        );
    }

    /// Borrowed rows from a log serialise to exactly the bytes of the owned rows.
    #[test]
    fn ownership_log_writes_the_bytes_of_its_rows() {
        let rows = vec![
            own(0, 0.0, 0.1, "c0", "consuming"),
            own(0, 0.1, 1.000_000_001, "", "stop-the-world"),
            own(1, 0.0, 1e-9, "c1,\"odd\"", "idle"),
        ];
        let owned = to_csv_bytes(&rows).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.csv");
        let log = OwnershipLog::from_rows(rows).unwrap();
        write_rows_atomic(&path, log.iter()).unwrap();
        assert_eq!(String::from_utf8(std::fs::read(&path).unwrap()).unwrap(), {
            String::from_utf8(owned).unwrap()
        });
    }

    /// The bytes of `reports`' ownership rows written by `write_ownership_atomic` and by the
    /// serde path (`write_rows_atomic` on the borrowed rows), as text.
    fn both_ownership_writers(reports: &[RunReport]) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let (fast, serde) = (dir.path().join("fast.csv"), dir.path().join("serde.csv"));
        write_ownership_atomic(&fast, reports).unwrap();
        write_rows_atomic(&serde, reports.iter().flat_map(|r| r.ownership.iter())).unwrap();
        let text = |p: &Path| String::from_utf8(std::fs::read(p).unwrap()).unwrap();
        (text(&fast), text(&serde))
    }

    /// A report holding only the ownership rows `rows`.
    fn ownership_report(rows: Vec<OwnershipRow>) -> RunReport {
        RunReport { ownership: OwnershipLog::from_rows(rows).unwrap(), ..RunReport::default() }
    }

    /// The fast ownership writer writes the serde path's bytes, for fields csv must quote,
    /// empty owners, both static values, awkward times and two protocol runs in one file.
    #[test]
    fn fast_ownership_writer_writes_the_serde_bytes() {
        let on = |topic: &str, mut row: OwnershipRow| {
            row.topic = topic.into();
            row
        };
        let eager = ownership_report(vec![
            on("t,1", own(0, 0.0, 5.0, "c0", "consuming")),
            on("t,1", own(0, 5.0, 123_456.789, "", "stop-the-world")),
            on("t,1", own(0, 123_456.789, 1e21, "c\"1", "frozen by hand")),
            on("t,1", own(0, 1e21, 1e21, "c2", "odd,state")),
            own(1, 0.0, 1e-7, "c-0.x:y/z@h+1", "idle"),
        ]);
        let mut coop_rows = vec![own(2, 0.0, 0.5, "c3", "revoked"), own(2, 0.5, 2.0, "", "idle")];
        for row in &mut coop_rows {
            (row.protocol, row.assignor, row.static_membership) =
                ("cooperative".into(), "sticky".into(), true);
        }
        let reports = [eager, RunReport::default(), ownership_report(coop_rows)];
        let (fast, serde) = both_ownership_writers(&reports);
        assert_eq!(fast, serde);
        // Derived by hand from csv's rules (quote a field holding `,`, `"`, CR or LF, doubling
        // its quotes; a space needs none; an empty field among others is written empty) and
        // ryu's shortest round-trip format (5.0 -> `5.0`, 1e-7 -> `1e-7`, 1e21 -> `1e21`). A
        // writer formatting times with `{}` (`5`, `0.0000001`, `1000000000000000000000`) or
        // quoting differently fails here even if the serde path changed with it.
        let expected = "\
protocol,assignor,static_membership,topic,partition,start_s,end_s,owner,state
eager,range,false,\"t,1\",0,0.0,5.0,c0,consuming
eager,range,false,\"t,1\",0,5.0,123456.789,,stop-the-world
eager,range,false,\"t,1\",0,123456.789,1e21,\"c\"\"1\",frozen by hand
eager,range,false,\"t,1\",0,1e21,1e21,c2,\"odd,state\"
eager,range,false,t,1,0.0,1e-7,c-0.x:y/z@h+1,idle
cooperative,sticky,true,t,2,0.0,0.5,c3,revoked
cooperative,sticky,true,t,2,0.5,2.0,,idle
";
        assert_eq!(fast, expected);
    }

    /// The next number of a fixed xorshift64 sequence (deterministic test data).
    fn scramble(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// The fast writer matches the serde path on many pseudo-random times (any bit pattern,
    /// NaN and infinities included, and multiples of 1/8) and names mixing bytes csv quotes
    /// with ones it does not, and on an empty first field and a quoted topic.
    #[test]
    fn fast_ownership_writer_matches_serde_on_scrambled_rows() {
        let pieces = ["", "a", " ", ",", "\"", "\r", "\n", "\\", "#", "é", "x-1", "'", "\t"];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        // Up to `most` pieces: state names have at most 2 (1 + 13 + 13^2 = 183 distinct, within
        // the log's 248 unknown state names).
        let name = |state: &mut u64, most: u64| -> String {
            let n = scramble(state) % (most + 1);
            (0..n).map(|_| pieces[(scramble(state) % pieces.len() as u64) as usize]).collect()
        };
        let time = |bits: u64| match bits % 3 {
            0 => (bits % 100_000) as f64 / 8.0,
            _ => f64::from_bits(bits),
        };
        let mut rows = Vec::new();
        for i in 0..2_000u32 {
            let (start_s, end_s) = (time(scramble(&mut state)), time(scramble(&mut state)));
            let (owner, state_name) = (name(&mut state, 3), name(&mut state, 2));
            rows.push(own(i / 7, start_s, end_s, &owner, &state_name));
        }
        let mut odd = own(0, 1.0, 2.0, "c", "idle");
        (odd.protocol, odd.topic) = (String::new(), "\"q\"".into());
        let reports = [ownership_report(rows), ownership_report(vec![odd])];
        let (fast, serde) = both_ownership_writers(&reports);
        assert_eq!(fast, serde);
        // The empty protocol is written empty (not `""`) and the topic quoted.
        assert!(fast.ends_with("\n,range,false,\"\"\"q\"\"\",0,1.0,2.0,c,idle\n"));
    }

    /// Names and labels longer than the inline windows (copied from the heap), rows past the
    /// 1 MiB chunk and past the buffer's room (it grows), in the serde path's bytes.
    #[test]
    fn fast_ownership_writer_handles_long_names_and_many_rows() {
        let long = |what: &str, len: usize| format!("{what}-{}", "x,".repeat(len / 2));
        let mut rows = Vec::new();
        for i in 0..40_000u32 {
            let owner = match i % 4 {
                0 => String::new(),
                1 => long("owner", 31 + (i as usize % 5)),
                2 => long("owner", 4_000),
                _ => format!("c{i}"),
            };
            let state = if i % 3 == 0 { long("state", 33) } else { "consuming".into() };
            let start_s = f64::from(i) * 0.000_1;
            let mut row = own(i / 100, start_s, start_s + 0.000_1, &owner, &state);
            if i >= 20_000 {
                row.topic = long("topic", 64);
            }
            rows.push(row);
        }
        let (fast, serde) = both_ownership_writers(&[ownership_report(rows)]);
        assert!(fast.len() > 4 << 20, "{} bytes", fast.len());
        assert_eq!(fast, serde);
    }

    /// 2^23 s in nanoseconds: the fast path takes whole nanoseconds from 10^4 up to below it.
    const FAST_LIMIT_NS: u64 = 8_388_608_000_000_000;

    /// `SecondsText` next to ryu for one `x` (the delimiter `SecondsText` adds checked and cut).
    fn both_texts(x: f64) -> (String, String) {
        let mut seconds = SecondsText::default();
        let (window, len) = seconds.field(x);
        assert_eq!(window[len - 1], b',', "{x:e}");
        let ours = String::from_utf8(window[..len - 1].to_vec()).unwrap();
        (ours, ryu::Buffer::new().format(x).to_owned())
    }

    /// Hand-picked values: each is written as ryu writes it, and the expected texts are ryu's
    /// layout derived by hand (shortest round-trip digits; positional from 1e-5 up to below
    /// 1e16, an exponent otherwise; `.0` after a whole number).
    #[test]
    fn seconds_text_writes_ryu_text_on_edge_values() {
        let subnormal = f64::from_bits(1);
        let cases: [(f64, &str); 26] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1e-9, "1e-9"),
            (9.999e-6, "9.999e-6"),
            (1e-5, "0.00001"),
            (1.0001e-5, "0.000010001"),
            (9.9999e-5, "0.000099999"),
            (1e-4, "0.0001"),
            (0.001, "0.001"),
            (0.01, "0.01"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.0, "1.0"),
            (5.0, "5.0"),
            (6.002, "6.002"),
            (10.0, "10.0"),
            (123_456.789, "123456.789"),
            (8_388_607.999_999_999, "8388607.999999999"),
            (8_388_608.0, "8388608.0"),
            (9_007_199.254_740_993, "9007199.254740993"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e16"),
            (1e21, "1e21"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (subnormal, "5e-324"),
        ];
        for (x, expected) in cases {
            let (ours, ryu) = both_texts(x);
            assert_eq!((ours.as_str(), ryu.as_str()), (expected, expected), "{x:e}");
        }
        for x in [-1.5, f64::from_bits(0x000F_FFFF_FFFF_FFFF), f64::NAN, f64::INFINITY] {
            let (ours, ryu) = both_texts(x);
            assert_eq!(ours, ryu, "{x:e}");
        }
    }

    /// The fast path takes the simulator's times and leaves the rest to ryu: a time of whole
    /// nanoseconds from 10 us to below 2^23 s (and 0.0) has its nanoseconds recovered; `-0.0`,
    /// a time below 10 us (ryu writes an exponent), one from 2^23 s and one off a whole
    /// nanosecond (0.1 + 0.2 is one ulp above 0.3) do not.
    #[test]
    fn fast_path_takes_whole_nanoseconds_only() {
        assert_eq!(whole_nanos(0.0), Some(0));
        assert_eq!(whole_nanos(1e-5), Some(10_000));
        assert_eq!(whole_nanos(6.002), Some(6_002_000_000));
        assert_eq!(whole_nanos(3_600.000_000_001), Some(3_600_000_000_001));
        assert_eq!(whole_nanos(8_388_607.999_999_999), Some(8_388_607_999_999_999));
        for x in [-0.0, 9.999e-6, 1e-9, 8_388_608.0, 0.1 + 0.2, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(whole_nanos(x), None, "{x:e}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Times of whole nanoseconds, as `SimTime::as_secs_f64` makes them, of a run's range
        /// and of any `u64`, and the doubles next to them (not whole nanoseconds, mostly).
        #[test]
        fn seconds_text_matches_ryu_on_nanosecond_times(
            hour in 0u64..4_000_000_000_000,
            any in proptest::prelude::any::<u64>(),
            step in -2i64..=2,
        ) {
            let ticks = [hour / 1_000_000 * 1_000_000, hour / 100_000 * 100_000, hour % 10_000_000_000_000 / 100_000 * 100_000];
            for n in [hour, any, any >> 11, any >> 20, ticks[0], ticks[1], ticks[2]] {
                let x = n as f64 / 1e9;
                if (10_000..FAST_LIMIT_NS).contains(&n) {
                    proptest::prop_assert_eq!(whole_nanos(x), Some(n));
                }
                let neighbour = f64::from_bits(x.to_bits().wrapping_add_signed(step));
                for x in [x, neighbour] {
                    let (ours, ryu) = both_texts(x);
                    proptest::prop_assert_eq!(ours, ryu, "n = {}", n);
                }
            }
        }

        /// Any bit pattern (finite or not).
        #[test]
        fn seconds_text_matches_ryu_on_any_bits(bits in proptest::prelude::any::<u64>()) {
            let x = f64::from_bits(bits);
            let (ours, ryu) = both_texts(x);
            proptest::prop_assert_eq!(ours, ryu);
        }
    }

    /// Every nanosecond count around the fast path's bounds (10^4 ns, where ryu turns to an
    /// exponent, and 2^23 s, where it ends) and around whole seconds.
    #[test]
    fn seconds_text_matches_ryu_around_the_fast_path_bounds() {
        let centres = [10_000, 100_000, 1_000_000_000, 3_600_000_000_000, FAST_LIMIT_NS];
        for centre in centres {
            for n in centre - 2_000..centre + 2_000 {
                let x = n as f64 / 1e9;
                let (ours, ryu) = both_texts(x);
                assert_eq!(ours, ryu, "n = {n}");
                let fast = (10_000..FAST_LIMIT_NS).contains(&n);
                assert_eq!(whole_nanos(x), fast.then_some(n), "n = {n}");
            }
        }
    }

    /// Every time of whole 0.1 ms (the short path's times) up to 20 s and around 10^4 s, where
    /// the short path ends.
    #[test]
    fn seconds_text_matches_ryu_on_tenths_of_milliseconds() {
        const TICK_NS: u64 = 100_000;
        let ticks = (0..200_000).chain(100_000_000 - 100_000..100_000_000 + 100_000);
        for n in ticks.map(|k| k * TICK_NS) {
            let (ours, ryu) = both_texts(n as f64 / 1e9);
            assert_eq!(ours, ryu, "n = {n}");
        }
    }

    #[test]
    fn ownership_rows_are_split_by_run_and_unknown_states_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let eager = RunReport {
            summary: Some(sample_summary()),
            ownership: OwnershipLog::from_rows(vec![
                own(0, 0.0, 2.5, "c0", "consuming"),
                own(0, 2.5, 3.0, "", "frozen-by-hand"),
            ])
            .unwrap(),
            ..RunReport::default()
        };
        let mut coop_summary = sample_summary();
        coop_summary.protocol = "cooperative".into();
        let mut coop_row = own(1, 0.0, 3.0, "c1", "revoked");
        coop_row.protocol = "cooperative".into();
        let coop = RunReport {
            summary: Some(coop_summary),
            ownership: OwnershipLog::from_rows(vec![coop_row]).unwrap(),
            ..RunReport::default()
        };
        let reports = vec![eager, coop];
        write_run_outputs(dir.path(), &reports).unwrap();
        let back = read_run_outputs(dir.path()).unwrap();
        assert_eq!(back, reports);
        assert_eq!(back[0].ownership.iter().last().unwrap().state, "frozen-by-hand");
        assert_eq!(back[1].ownership.len(), 1);
    }

    #[test]
    fn outputs_round_trip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let report = RunReport { summary: Some(sample_summary()), ..RunReport::default() };
        write_run_outputs(dir.path(), std::slice::from_ref(&report)).unwrap();
        let back = read_run_outputs(dir.path()).unwrap();
        assert_eq!(back, vec![report]);
    }
}
