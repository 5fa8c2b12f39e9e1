//! A byte buffer filled by fixed-size copies, and the trait of the places `ownership.csv` rows
//! are formatted into ([`RowSink`]).
//!
//! [`RowBuffer::put_fixed`] copies a whole `N`-byte window (a few vector moves, no `memcpy`
//! call) and keeps only its first `len` bytes, the rest being overwritten by the next piece:
//! a row is assembled from small pieces of varying length at the cost of fixed ones. The text
//! may start at an offset (the block writer keeps it aligned for `O_DIRECT`).

use std::io;

/// A growable byte buffer whose text is `bytes[start..len]`. The bytes of `bytes` are
/// initialised (zeros at first); those past the text are scratch room for the fixed-size
/// copies. Its capacity is reserved at once but zeroed only as the text reaches it
/// ([`ZERO_AHEAD`] bytes at a time): a small file does not pay for a large buffer (the 4 MiB
/// chunks of a run's streamed files, zeroed at once, cost a one-second run three quarters of
/// its instructions), and the reserved room does not move, so the text stays aligned.
pub(crate) struct RowBuffer {
    bytes: Vec<u8>,
    /// Where the text starts: a multiple of `align` in memory when the buffer is aligned.
    start: usize,
    /// Where the text ends.
    len: usize,
    /// The alignment of the text's start (1: none).
    align: usize,
}

impl RowBuffer {
    /// An empty buffer with room for `capacity` bytes (it grows past them when needed).
    pub(crate) fn with_capacity(capacity: usize) -> RowBuffer {
        RowBuffer::aligned(capacity, 1)
    }

    /// An empty buffer with room for `capacity` bytes whose text starts at a multiple of
    /// `align` (a power of two) in memory, also after it grows (see [`RowBuffer::is_aligned`]).
    pub(crate) fn aligned(capacity: usize, align: usize) -> RowBuffer {
        let bytes = Vec::with_capacity(capacity + align - 1);
        let start = aligned_start(bytes.as_ptr(), align);
        let mut buffer = RowBuffer { bytes, start, len: start, align };
        buffer.zero_ahead(0);
        buffer
    }

    /// Zeroes the reserved room (without moving the bytes) so that at least `additional`
    /// bytes, and up to [`ZERO_AHEAD`] more, follow the text; false if the room reserved
    /// is too small.
    fn zero_ahead(&mut self, additional: usize) -> bool {
        let needed = self.len + additional;
        if needed > self.bytes.capacity() {
            return false;
        }
        if needed > self.bytes.len() {
            let ahead = (needed + ZERO_AHEAD).min(self.bytes.capacity());
            self.bytes.resize(ahead, 0);
        }
        true
    }

    /// Whether the text starts at a multiple of the alignment asked for (the platform may
    /// refuse to align; it does not on the ones in use).
    pub(crate) fn is_aligned(&self) -> bool {
        self.text().as_ptr().align_offset(self.align) == 0
    }

    /// The text.
    pub(crate) fn text(&self) -> &[u8] {
        &self.bytes[self.start..self.len]
    }

    /// The length of the text.
    #[inline]
    pub(crate) fn text_len(&self) -> usize {
        self.len - self.start
    }

    /// Drops the first `n` bytes of the text, moving the rest to the start.
    pub(crate) fn consume(&mut self, n: usize) {
        let rest = self.start + n..self.len;
        self.bytes.copy_within(rest, self.start);
        self.len -= n;
    }

    /// Appends the first `len` bytes of `window` (`len <= N`), copying all `N`.
    #[inline]
    pub(crate) fn put_fixed<const N: usize>(&mut self, window: &[u8; N], len: usize) {
        debug_assert!(len <= N);
        let room = match self.bytes[self.len..].first_chunk_mut::<N>() {
            Some(room) => room,
            None => self.grow::<N>(),
        };
        *room = *window;
        self.len += len;
    }

    /// Appends `text` (any length).
    pub(crate) fn put_slice(&mut self, text: &[u8]) {
        if self.bytes.len() - self.len < text.len() && !self.zero_ahead(text.len()) {
            self.reserve(text.len());
        }
        let end = self.len + text.len();
        self.bytes[self.len..end].copy_from_slice(text);
        self.len = end;
    }

    /// Makes room for at least `N` bytes after the text and returns the first `N`.
    #[cold]
    #[inline(never)]
    fn grow<const N: usize>(&mut self) -> &mut [u8; N] {
        if !self.zero_ahead(N) {
            self.reserve(N);
        }
        self.bytes[self.len..].first_chunk_mut().expect("room made")
    }

    /// Makes room for at least `additional` bytes after the text (at least doubling the
    /// buffer), keeping the text's alignment: the text moves into a new buffer.
    #[cold]
    #[inline(never)]
    fn reserve(&mut self, additional: usize) {
        let text_len = self.text_len();
        let capacity = (text_len + additional).max(2 * self.bytes.capacity());
        let mut moved = RowBuffer::aligned(capacity, self.align);
        moved.put_slice(self.text());
        let room = moved.zero_ahead(additional);
        debug_assert!(room, "a buffer reserved for the text and {additional} bytes more");
        *self = moved;
    }
}

/// Bytes zeroed past the text at a time, within the reserved room.
const ZERO_AHEAD: usize = 64 << 10;

/// The first offset from `ptr` at a multiple of `align` in memory, if below `align` (0 if the
/// platform cannot tell).
fn aligned_start(ptr: *const u8, align: usize) -> usize {
    let offset = ptr.align_offset(align);
    if offset < align {
        offset
    } else {
        0
    }
}

/// Where rows are formatted: a [`RowBuffer`] they are appended to, whose text is passed on
/// once it holds [`RowSink::CHUNK`] bytes or more.
pub(crate) trait RowSink {
    /// The text passed on at a time (rows go on until it is reached or passed).
    const CHUNK: usize;

    /// The buffer to append rows to.
    fn buffer(&mut self) -> &mut RowBuffer;

    /// Passes on (at least) the first [`RowSink::CHUNK`] bytes of the text, while there are
    /// that many.
    fn pass_on(&mut self) -> io::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed-size copies keep only their lengths; the text survives growth and stays aligned;
    /// consuming moves the rest to the start.
    #[test]
    fn fixed_copies_growth_and_consumption() {
        let mut buf = RowBuffer::aligned(8, 64);
        assert!(buf.is_aligned());
        buf.put_fixed(b"abcdefgh", 3);
        buf.put_fixed(&[b'x'; 32], 1);
        assert_eq!(buf.text(), b"abcx");
        buf.put_slice(&[b'y'; 100]);
        assert_eq!(buf.text_len(), 104);
        assert!(buf.is_aligned());
        buf.consume(100);
        assert_eq!(buf.text(), b"yyyy");
        let mut plain = RowBuffer::with_capacity(0);
        plain.put_fixed(b"12", 2);
        plain.put_slice(b"");
        assert_eq!(plain.text(), b"12");
    }

    /// A large buffer zeroes its room as the text reaches it, without moving: a few rows
    /// touch [`ZERO_AHEAD`] bytes, not the 4 MiB reserved; a megabyte of rows stays where
    /// the buffer began, aligned, every byte kept; past the reserved room it moves and grows.
    #[test]
    fn the_reserved_room_is_zeroed_as_the_text_reaches_it() {
        let mut buf = RowBuffer::aligned(4 << 20, 4096);
        let begun = buf.bytes.as_ptr();
        buf.put_fixed(b"abc,1\n\0\0", 6);
        assert!(buf.bytes.len() <= 4095 + 6 + ZERO_AHEAD, "zeroed {}", buf.bytes.len());
        let row: Vec<u8> = (0..1000).map(|i| b'a' + (i % 26) as u8).collect();
        for _ in 0..1048 {
            buf.put_slice(&row);
            buf.put_fixed(&[b'\n'; 16], 1);
        }
        assert_eq!(buf.text_len(), 6 + 1048 * 1001);
        assert_eq!(buf.bytes.as_ptr(), begun, "the text did not move");
        assert!(buf.is_aligned());
        assert!(buf.bytes.len() < (1 << 20) + 4095 + 2 * ZERO_AHEAD, "zeroed {}", buf.bytes.len());
        assert_eq!(&buf.text()[..6], b"abc,1\n");
        assert_eq!(&buf.text()[6..1006], &row[..]);
        assert_eq!(buf.text()[1006], b'\n');
        let reserved = buf.bytes.capacity();
        buf.put_slice(&vec![b'z'; 4 << 20]);
        assert!(buf.bytes.capacity() > reserved, "grown past the room reserved");
        assert!(buf.is_aligned());
        assert_eq!(buf.text_len(), 6 + 1048 * 1001 + (4 << 20));
        assert_eq!(&buf.text()[6 + 1048 * 1001 - 1..][..2], b"\nz");
    }
}
