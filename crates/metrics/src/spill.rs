//! The spill file of a run's closed timeline intervals (`timeline.rs`): sorted runs of
//! [`ClosedSpan`]s, 16 bytes each (end in nanoseconds, owner, timeline and state; all
//! little-endian), appended one after another to an unnamed temporary file (`tempfile`: it has
//! no name in any folder, so a run's output folder never sees it, and the system removes it
//! when the last handle closes, also if the process dies). Reading it back, each run has its
//! own cursor and buffer and reads at its own offsets (`pread`), so any number of merges can
//! read one file at once.

use crate::timeline::ClosedSpan;
use sim_core::SimTime;
use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

/// Bytes of one span in the file.
const SPAN_BYTES: usize = 16;

/// Spans a cursor reads at once (16 KiB): a merge holds one buffer per run.
const READ_SPANS: usize = 1 << 10;

/// Spans encoded per write (64 KiB).
const WRITE_SPANS: usize = 1 << 12;

/// One sorted run of closed intervals.
#[derive(Clone, Debug)]
pub(crate) enum Run {
    /// Held in memory (a run that was never spilled, or the spill file failed).
    Memory(Arc<Vec<ClosedSpan>>),
    /// `len` spans in the spill file from byte `offset`.
    Disk { offset: u64, len: usize },
}

impl Run {
    /// Its spans.
    pub(crate) fn len(&self) -> usize {
        match self {
            Run::Memory(spans) => spans.len(),
            Run::Disk { len, .. } => *len,
        }
    }

    /// A cursor at its first span (`file` holds the disk runs).
    pub(crate) fn cursor<'a>(&'a self, file: Option<&'a SpillReader>) -> Cursor<'a> {
        match self {
            Run::Memory(spans) => Cursor::Memory { spans, pos: 0 },
            Run::Disk { offset, len } => Cursor::Disk {
                file: file.expect("a disk run has its file"),
                offset: *offset,
                remaining: *len,
                buf: Vec::new(),
                pos: 0,
            },
        }
    }
}

/// The spill file while runs are appended.
#[derive(Debug)]
pub(crate) struct SpillFile {
    file: File,
    /// Bytes written.
    end: u64,
    bytes: Vec<u8>,
}

impl SpillFile {
    /// A new, empty spill file in the system's temporary folder (`TMPDIR`).
    pub(crate) fn new() -> io::Result<SpillFile> {
        Ok(SpillFile { file: tempfile::tempfile()?, end: 0, bytes: Vec::new() })
    }

    /// Appends `spans` as one run.
    pub(crate) fn append(&mut self, spans: &[ClosedSpan]) -> io::Result<Run> {
        let offset = self.end;
        for block in spans.chunks(WRITE_SPANS) {
            self.bytes.clear();
            for span in block {
                self.bytes.extend_from_slice(&span.end.as_nanos().to_le_bytes());
                self.bytes.extend_from_slice(&span.owner.to_le_bytes());
                self.bytes.extend_from_slice(&span.part_state.to_le_bytes());
            }
            self.file.write_all(&self.bytes)?;
            self.end += self.bytes.len() as u64;
        }
        Ok(Run::Disk { offset, len: spans.len() })
    }

    /// The file for reading.
    pub(crate) fn into_reader(self) -> SpillReader {
        SpillReader { file: self.file }
    }
}

/// The spill file once every run is written.
#[derive(Debug)]
pub(crate) struct SpillReader {
    file: File,
}

impl SpillReader {
    /// Fills `buf` from byte `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            let mut done = 0;
            while done < buf.len() {
                let n = std::os::windows::fs::FileExt::seek_read(
                    &self.file,
                    &mut buf[done..],
                    offset + done as u64,
                )?;
                if n == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                done += n;
            }
            Ok(())
        }
    }
}

/// A position in a run.
pub(crate) enum Cursor<'a> {
    /// In a run in memory.
    Memory { spans: &'a [ClosedSpan], pos: usize },
    /// In a run on disk: `buf` holds the spans read, `pos` the next one's byte.
    Disk { file: &'a SpillReader, offset: u64, remaining: usize, buf: Vec<u8>, pos: usize },
}

impl Cursor<'_> {
    /// The span at the cursor, `None` past the run's end.
    pub(crate) fn peek(&mut self) -> io::Result<Option<ClosedSpan>> {
        match self {
            Cursor::Memory { spans, pos } => Ok(spans.get(*pos).copied()),
            Cursor::Disk { file, offset, remaining, buf, pos } => {
                if *pos == buf.len() {
                    if *remaining == 0 {
                        return Ok(None);
                    }
                    let n = (*remaining).min(READ_SPANS);
                    buf.resize(n * SPAN_BYTES, 0);
                    file.read_at(buf, *offset)?;
                    *offset += buf.len() as u64;
                    *remaining -= n;
                    *pos = 0;
                }
                let bytes = &buf[*pos..*pos + SPAN_BYTES];
                let word = |from: usize, to: usize| -> [u8; 4] {
                    bytes[from..to].try_into().expect("4 bytes")
                };
                let end = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
                Ok(Some(ClosedSpan {
                    end: SimTime::from_nanos(end),
                    owner: u32::from_le_bytes(word(8, 12)),
                    part_state: u32::from_le_bytes(word(12, 16)),
                }))
            }
        }
    }

    /// Moves past the span [`Cursor::peek`] returned.
    pub(crate) fn advance(&mut self) {
        match self {
            Cursor::Memory { pos, .. } => *pos += 1,
            Cursor::Disk { pos, .. } => *pos += SPAN_BYTES,
        }
    }
}
