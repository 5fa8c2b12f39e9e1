//! A byte buffer filled by fixed-size copies, and the trait of the places `ownership.csv` rows
//! are formatted into ([`RowSink`]).
//!
//! [`RowBuffer::put_fixed`] copies a whole `N`-byte window (a few vector moves, no `memcpy`
//! call) and keeps only its first `len` bytes, the rest being overwritten by the next piece:
//! a row is assembled from small pieces of varying length at the cost of fixed ones. The text
//! may start at an offset (the block writer keeps it aligned for `O_DIRECT`).

use std::io;

/// A growable byte buffer whose text is `bytes[start..len]`. All its bytes are initialised
/// (zeros at first); those past the text are scratch room for the fixed-size copies.
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
        let bytes = vec![0; capacity + align - 1];
        let start = aligned_start(&bytes, align);
        RowBuffer { bytes, start, len: start, align }
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
        if self.bytes.len() - self.len < text.len() {
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
        self.reserve(N);
        self.bytes[self.len..].first_chunk_mut().expect("room made")
    }

    /// Makes room for at least `additional` bytes after the text (at least doubling the
    /// buffer), keeping the text's alignment: the text moves into a new buffer.
    #[cold]
    #[inline(never)]
    fn reserve(&mut self, additional: usize) {
        let text_len = self.text_len();
        let capacity = (text_len + additional).max(2 * self.bytes.len());
        let mut bytes = vec![0; capacity + self.align - 1];
        let start = aligned_start(&bytes, self.align);
        bytes[start..start + text_len].copy_from_slice(self.text());
        *self = RowBuffer { bytes, start, len: start + text_len, align: self.align };
    }
}

/// The first offset in `bytes` at a multiple of `align` in memory, if below `align` (0 if the
/// platform cannot tell).
fn aligned_start(bytes: &[u8], align: usize) -> usize {
    let offset = bytes.as_ptr().align_offset(align);
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
}
