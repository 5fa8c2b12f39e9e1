//! The writer of a streamed output file: whole blocks go to the disk past the page cache
//! (Linux `O_DIRECT`), the last partial block through the ordinary file.
//!
//! Every output file is synced before it is renamed into place (`csv_out::write_atomic`), so
//! its bytes go to the disk before the run ends whichever way they are written. Through the
//! page cache they are first copied into freshly allocated cache pages: on the machines of
//! this project that copy cost 2.4 s of system time per GB (`dd bs=4M count=250` to a file:
//! 2.37 s; with `oflag=direct`: 0.36 s), and the one-hour eager reference run writes a 1 GB
//! `ownership.csv`. Written from an aligned buffer with `O_DIRECT`, the same bytes skip that
//! copy. Where the file system refuses it (tmpfs, some network file systems, not Linux), or a
//! write comes back short or fails, the rest goes through the ordinary file: the bytes of the
//! file are the same either way.
//!
//! The `ownership.csv` rows are formatted straight into the writer's chunk ([`RowSink`]), so
//! they are not copied a second time.

use crate::row_buffer::{RowBuffer, RowSink};
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;

/// The alignment of `O_DIRECT` buffers, offsets and lengths (a page: a multiple of every
/// logical block size in use).
const BLOCK: usize = 4096;

/// Bytes gathered before a write: a few large writes keep the disk streaming.
const CHUNK: usize = 4 << 20;

/// Room past the chunk for the row that fills it (a longer one makes the buffer grow).
const SLACK: usize = 64 << 10;

/// A `Write` into `file` (opened for writing at offset 0, empty) that sends whole blocks past
/// the page cache. [`BlockWriter::finish`] writes the rest and gives the file back.
pub(crate) struct BlockWriter {
    file: File,
    /// A second handle on the same file with `O_DIRECT`, while it works.
    direct: Option<File>,
    /// The chunk being filled, `BLOCK`-aligned, with room for `CHUNK + SLACK` bytes; its
    /// text is the bytes not yet written.
    chunk: RowBuffer,
    /// Bytes already in the file (the offset of the chunk's first byte).
    written: u64,
}

impl BlockWriter {
    /// A writer into `file`, found at `path` (opened a second time past the page cache where
    /// the platform and file system allow it).
    pub(crate) fn new(file: File, path: &Path) -> BlockWriter {
        let chunk = RowBuffer::aligned(CHUNK + SLACK, BLOCK);
        let direct = if chunk.is_aligned() { open_direct(path) } else { None };
        BlockWriter { file, direct, chunk, written: 0 }
    }

    /// Writes what is left and returns the file, every byte written (not synced).
    pub(crate) fn finish(mut self) -> io::Result<File> {
        let whole = self.chunk.text_len() / BLOCK * BLOCK;
        self.write_out(whole)?;
        self.write_out(self.chunk.text_len())?;
        Ok(self.file)
    }

    /// Writes the first `len` bytes of the chunk and keeps the rest at its front.
    fn write_out(&mut self, len: usize) -> io::Result<()> {
        let mut done = 0;
        // A chunk that grew may have lost its alignment: `O_DIRECT` would refuse it.
        if len.is_multiple_of(BLOCK) && self.chunk.is_aligned() {
            done = self.write_direct(len);
        }
        if done < len {
            // The ordinary file: from where the direct writes stopped.
            self.file.seek(SeekFrom::Start(self.written + done as u64))?;
            self.file.write_all(&self.chunk.text()[done..len])?;
        }
        self.written += len as u64;
        self.chunk.consume(len);
        Ok(())
    }

    /// Writes as many of the chunk's first `len` bytes (whole blocks) as `O_DIRECT` takes;
    /// gives it up at the first error or short write. Returns the bytes written.
    fn write_direct(&mut self, len: usize) -> usize {
        let mut done = 0;
        while done < len {
            let Some(direct) = self.direct.as_mut() else { break };
            let bytes = &self.chunk.text()[done..len];
            match direct.write(bytes) {
                Ok(n) if n > 0 && n.is_multiple_of(BLOCK) => done += n,
                Ok(n) => {
                    // A short write leaves the next offset unaligned: the rest goes the
                    // ordinary way, from the byte after it.
                    done += n;
                    self.direct = None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => self.direct = None,
            }
        }
        done
    }
}

impl Write for BlockWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pass_on()?;
        let n = bytes.len().min(CHUNK - self.chunk.text_len());
        self.chunk.put_slice(&bytes[..n]);
        Ok(n)
    }

    /// Nothing to do: [`BlockWriter::finish`] writes the last bytes.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Rows are formatted straight into the chunk.
impl RowSink for BlockWriter {
    const CHUNK: usize = CHUNK;

    #[inline]
    fn buffer(&mut self) -> &mut RowBuffer {
        &mut self.chunk
    }

    fn pass_on(&mut self) -> io::Result<()> {
        while self.chunk.text_len() >= CHUNK {
            self.write_out(CHUNK)?;
        }
        Ok(())
    }
}

/// `path` opened for writing with `O_DIRECT`, if the platform and file system allow it.
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of `parts`, written one after the other through a `BlockWriter` into a
    /// temporary file in `dir`, read back.
    fn written(dir: &Path, parts: &[&[u8]]) -> Vec<u8> {
        let tmp = tempfile::NamedTempFile::new_in(dir).unwrap();
        let mut writer = BlockWriter::new(tmp.reopen().unwrap(), tmp.path());
        for part in parts {
            writer.write_all(part).unwrap();
        }
        writer.finish().unwrap();
        std::fs::read(tmp.path()).unwrap()
    }

    /// Bytes that differ from block to block (a misplaced block would show).
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / BLOCK) as u8).collect()
    }

    /// Lengths around the block and chunk sizes, in one write and in uneven pieces: the file
    /// holds exactly the bytes written, whether or not `O_DIRECT` took the whole blocks.
    #[test]
    fn writes_exactly_the_bytes_given() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, CHUNK, CHUNK + 3 * BLOCK + 17, 2 * CHUNK] {
            let bytes = pattern(len);
            assert_eq!(written(dir.path(), &[&bytes]), bytes, "one write of {len}");
            let pieces: Vec<&[u8]> = bytes.chunks(1_000_003).collect();
            assert_eq!(written(dir.path(), &pieces), bytes, "pieces of {len}");
        }
    }

    /// Rows appended to the chunk in place ([`RowSink`]), one of them longer than the room
    /// past the chunk (the chunk grows, staying aligned), are written exactly.
    #[test]
    fn rows_appended_in_place_are_written_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
        let mut writer = BlockWriter::new(tmp.reopen().unwrap(), tmp.path());
        let bytes = pattern(3 * CHUNK);
        let rows = [1_000, CHUNK - 1_500, 2 * SLACK, 7, CHUNK, 3 * BLOCK + 1];
        let mut at = 0;
        for len in rows {
            writer.buffer().put_slice(&bytes[at..at + len]);
            at += len;
            if writer.buffer().text_len() >= <BlockWriter as RowSink>::CHUNK {
                writer.pass_on().unwrap();
            }
            assert!(writer.buffer().is_aligned());
        }
        writer.write_all(&bytes[at..]).unwrap();
        writer.finish().unwrap();
        assert_eq!(std::fs::read(tmp.path()).unwrap(), bytes);
    }

    /// Without the direct handle (refused), every byte goes through the ordinary file.
    #[test]
    fn falls_back_to_the_ordinary_file() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
        let mut writer = BlockWriter::new(tmp.reopen().unwrap(), tmp.path());
        writer.direct = None;
        let bytes = pattern(CHUNK + BLOCK + 5);
        writer.write_all(&bytes).unwrap();
        writer.finish().unwrap();
        assert_eq!(std::fs::read(tmp.path()).unwrap(), bytes);
    }

    /// On Linux, a file system that takes `O_DIRECT` (the temporary folder's) gets the whole blocks
    /// that way: the handle is still there after a chunk went out.
    #[cfg(target_os = "linux")]
    #[test]
    fn whole_blocks_go_past_the_page_cache_where_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
        let mut writer = BlockWriter::new(tmp.reopen().unwrap(), tmp.path());
        if writer.direct.is_none() {
            eprintln!("O_DIRECT refused here: nothing to check");
            return;
        }
        writer.write_all(&pattern(CHUNK + 1)).unwrap();
        assert!(writer.direct.is_some(), "a chunk was written with O_DIRECT");
        assert_eq!(writer.written, CHUNK as u64);
        writer.finish().unwrap();
        assert_eq!(std::fs::read(tmp.path()).unwrap(), pattern(CHUNK + 1));
    }
}
