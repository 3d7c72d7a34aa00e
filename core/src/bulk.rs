//! The bulk commands' blob (`BF.BULKADD`, `BF.BULKEXISTS`, `CF.BULKADD`, `CF.BULKEXISTS`): many
//! items in one argument, and one byte per item in the reply. Redis spends about 300 ns on each
//! argument of a command (parsing, an object, a reply element), far more than a filter needs
//! per item, so a batch in one argument runs at the filter's speed.
//!
//! Two forms:
//! - **lines** (the default): items separated by `\n`. A final `\n` ends the last item and
//!   starts none, so a file of lines (`redis-cli -x BF.BULKADD key < urls.txt`) is its items.
//!   Every other `\n` ends an item, so an empty line is the empty item, as `BF.ADD key ""`
//!   adds it. The bytes are the item's as they stand: a `\r` before the `\n` (a file with
//!   CRLF line ends) is part of the item.
//! - **framed** (`FRAMED`): each item preceded by its length, a 4-byte little-endian
//!   unsigned integer, so an item may hold any byte. A frame whose length runs past the end of
//!   the blob refuses the whole blob before anything changes.
//!
//! The reply is one string, a byte per item in order: [`YES`] (`1`), [`NO`] (`0`), or
//! [`REFUSED`] (`E`) for an item an add could not take (a full NONSCALING filter, the memory
//! limit, a full cuckoo filter).

use crate::args::{is, Refusal};
use crate::errors;

/// An item's answer: added (an add) or present (a lookup).
pub const YES: u8 = b'1';
/// An item's answer: already present (an add) or absent (a lookup).
pub const NO: u8 = b'0';
/// An add's answer for an item the filter could not take.
pub const REFUSED: u8 = b'E';

/// The bytes of a frame's length.
pub const FRAME_HEADER: usize = 4;

/// Why a blob was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobError {
    /// A frame's length runs past the end of the blob: its offset and its length.
    Truncated {
        /// Where the frame starts.
        offset: usize,
        /// The length it declares.
        length: u64,
    },
    /// The blob ends inside a frame's 4-byte length.
    PartialLength {
        /// Where the frame starts.
        offset: usize,
    },
}

impl BlobError {
    /// The error reply.
    pub fn reply(&self) -> String {
        match *self {
            BlobError::Truncated { offset, length } => format!(
                "ERR bad FRAMED blob: the frame at byte {offset} declares {length} bytes, past \
                 the end of the blob (nothing was changed)"
            ),
            BlobError::PartialLength { offset } => format!(
                "ERR bad FRAMED blob: it ends inside the 4-byte length of the frame at byte \
                 {offset} (nothing was changed)"
            ),
        }
    }
}

/// The items of a blob, in order, or why it was refused: every frame is checked before the
/// first item is returned, so a refused blob changes nothing.
pub fn items(blob: &[u8], framed: bool) -> Result<Items<'_>, BlobError> {
    if framed {
        return Ok(Items {
            form: Form::Frames { blob, at: 0 },
            left: count_frames(blob)?,
        });
    }
    let body = blob.strip_suffix(b"\n").unwrap_or(blob);
    Ok(Items {
        // An empty blob has no items; any other, one more than the newlines its body holds.
        left: match blob.is_empty() {
            true => 0,
            false => count_newlines(body) + 1,
        },
        form: Form::Lines(Lines {
            body,
            start: 0,
            next_chunk: 0,
            base: 0,
            mask: 0,
        }),
    })
}

/// A checked blob's items, in order: cut from the blob as they are read, so a blob costs no
/// memory beyond itself (a list of its items took 16 bytes each: a blob of 100 MB of empty
/// lines asked for 1.6 GB, and a server that could not have it aborted). Its length is known
/// before the first item; a clone reads the items again (what an add replicates).
#[derive(Debug, Clone)]
pub struct Items<'a> {
    form: Form<'a>,
    left: usize,
}

#[derive(Debug, Clone)]
enum Form<'a> {
    Lines(Lines<'a>),
    /// Frames, every one checked: `at` is the next one's length.
    Frames {
        blob: &'a [u8],
        at: usize,
    },
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a [u8];

    // Inlined into the batches' loops, which call it once per item: as a call it was 3.5 ns
    // of the 48 a BF.BULKEXISTS item cost in the server's profile (a 10M filter).
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(match &mut self.form {
            // The last line is what follows the last newline.
            Form::Lines(lines) if self.left == 0 => &lines.body[lines.start..],
            Form::Lines(lines) => lines.next_line(),
            Form::Frames { blob, at } => {
                let header = blob[*at..*at + FRAME_HEADER].try_into().expect("4 bytes");
                let start = *at + FRAME_HEADER;
                *at = start + u32::from_le_bytes(header) as usize;
                &blob[start..*at]
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// The `\n`-separated items of a blob's body, found 64 bytes at a time, each chunk's newlines
/// the bits of a mask. A `memchr_iter` call per item (two passes: one to count the items, one
/// to cut them) took 10.1 ns per 40-byte URL in the core (blobs of 1,000); the masks, cutting
/// into a list, 5.7.
#[derive(Debug, Clone)]
struct Lines<'a> {
    body: &'a [u8],
    /// Where the next item starts.
    start: usize,
    /// The next chunk to scan.
    next_chunk: usize,
    /// The scanned chunk's offset, and its newlines not yet cut.
    base: usize,
    mask: u64,
}

impl<'a> Lines<'a> {
    /// The next item that ends in a newline (the caller knows one is left).
    #[inline(always)]
    fn next_line(&mut self) -> &'a [u8] {
        while self.mask == 0 {
            self.base = self.next_chunk;
            self.mask = newlines_at(self.body, self.base);
            self.next_chunk += CHUNK;
        }
        let end = self.base + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        let line = &self.body[self.start..end];
        self.start = end + 1;
        line
    }
}

/// The newlines in `body`. Each of 16 byte lanes counts its newlines (a compare and a subtract
/// per 16 bytes), the lanes summed every 255 rounds, before a lane could wrap: the masks of
/// [`newlines`], counted, took 1.2 ns per 40-byte URL in the core (blobs of 1,000), this 0.6.
fn count_newlines(body: &[u8]) -> usize {
    let mut parts = body.chunks_exact(16);
    let mut count = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_sad_epu8, _mm_set1_epi8,
            _mm_setzero_si128, _mm_sub_epi8, _mm_unpackhi_epi64,
        };
        loop {
            let mut rounds = 0;
            // SAFETY: SSE2 is part of every x86_64 target, and each unaligned load reads the 16
            // bytes its part holds, no more.
            let lanes = unsafe {
                let newline = _mm_set1_epi8(b'\n' as i8);
                let mut lanes = _mm_setzero_si128();
                for part in parts.by_ref().take(u8::MAX as usize) {
                    let bytes = _mm_loadu_si128(part.as_ptr().cast());
                    // A match is all ones (-1): subtracting it counts one.
                    lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, newline));
                    rounds += 1;
                }
                let sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
                _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums))
            };
            count += lanes as usize;
            if rounds < u8::MAX as usize {
                break;
            }
        }
    }
    // The bytes past the last whole part (and, where the lanes are not compiled, every part).
    let rest = parts.remainder().iter().chain(parts.flatten());
    count + rest.filter(|&&b| b == b'\n').count()
}

/// The newlines of the 64 bytes of `body` from `at` (none past its end).
#[inline(always)]
fn newlines_at(body: &[u8], at: usize) -> u64 {
    match body.get(at..at + CHUNK) {
        Some(whole) => newlines(whole.try_into().expect("a whole chunk")),
        None => {
            let mut tail = [0u8; CHUNK];
            let rest = body.get(at..).unwrap_or_default();
            tail[..rest.len()].copy_from_slice(rest);
            newlines(&tail)
        }
    }
}

/// The bytes [`newlines`] scans at once.
const CHUNK: usize = 64;

/// Bit `i` set where `chunk[i]` is `\n`.
#[inline(always)]
fn newlines(chunk: &[u8; CHUNK]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut mask = 0u64;
        for (i, part) in chunk.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of every x86_64 target, and the unaligned load reads the 16
            // bytes `part` holds, no more.
            let hits = unsafe {
                let bytes = _mm_loadu_si128(part.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8))) as u16
            };
            mask |= u64::from(hits) << (16 * i);
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        chunk
            .iter()
            .enumerate()
            .fold(0, |mask, (i, &b)| mask | (u64::from(b == b'\n') << i))
    }
}

/// The frames of a blob, each checked to lie whole inside it.
fn count_frames(blob: &[u8]) -> Result<usize, BlobError> {
    let (mut at, mut count) = (0, 0);
    while at < blob.len() {
        let Some(length) = blob.get(at..at + FRAME_HEADER) else {
            return Err(BlobError::PartialLength { offset: at });
        };
        let length = u32::from_le_bytes(length.try_into().expect("4 bytes"));
        let start = at + FRAME_HEADER;
        match start.checked_add(length as usize) {
            Some(end) if end <= blob.len() => at = end,
            _ => {
                return Err(BlobError::Truncated {
                    offset: at,
                    length: u64::from(length),
                })
            }
        }
        count += 1;
    }
    Ok(count)
}

/// Appends `item` as a frame of a FRAMED blob.
pub fn push_frame(blob: &mut Vec<u8>, item: &[u8]) {
    let length = u32::try_from(item.len()).expect("an item under 4 GiB");
    blob.extend_from_slice(&length.to_le_bytes());
    blob.extend_from_slice(item);
}

/// The items an add took (every one whose answer is not [`REFUSED`]), as a FRAMED blob; None
/// when it took none. A bulk add that refused some items replicates these.
pub fn taken<'a>(items: impl Iterator<Item = &'a [u8]> + Clone, answers: &[u8]) -> Option<Vec<u8>> {
    let took = || items.clone().zip(answers).filter(|(_, &a)| a != REFUSED);
    let bytes: usize = took().map(|(item, _)| FRAME_HEADER + item.len()).sum();
    let mut blob = Vec::with_capacity(bytes);
    for (item, _) in took() {
        push_frame(&mut blob, item);
    }
    (bytes > 0).then_some(blob)
}

/// What a bulk command asks for beyond its blob: `[FRAMED] [AT ms] [NOREFRESH] blob` (the
/// Bloom commands' words; the cuckoo commands take `FRAMED` alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkWords {
    /// Items are framed, not lines.
    pub framed: bool,
    /// A time window adds at this Unix time in milliseconds (as `BF.INSERT`'s `AT`).
    pub at: Option<u64>,
    /// An add of a held item does not refresh it (as `BF.INSERT`'s `NOREFRESH`).
    pub norefresh: bool,
}

/// Parses `CMD key [words…] blob` (`argv[0]` is the command name): the words between the key
/// and the blob, each at most once; `window_words` says whether `AT` and `NOREFRESH` are taken.
pub fn words(argv: &[&[u8]], command: &str, window_words: bool) -> Result<BulkWords, Refusal> {
    if argv.len() < 3 {
        return Err(Refusal::Arity);
    }
    let mut w = BulkWords::default();
    let last = argv.len() - 1;
    let mut i = 2;
    while i < last {
        let word = argv[i];
        let twice = |name| Err(Refusal::Named(errors::given_twice(name)));
        if is(word, "FRAMED") {
            if w.framed {
                return twice("FRAMED");
            }
            w.framed = true;
        } else if window_words && is(word, "NOREFRESH") {
            if w.norefresh {
                return twice("NOREFRESH");
            }
            w.norefresh = true;
        } else if window_words && is(word, "AT") {
            if w.at.is_some() {
                return twice("AT");
            }
            if i + 1 >= last {
                return Err(Refusal::Arity);
            }
            w.at = Some(crate::window::args::parse_at(argv, i + 1)?);
            i += 1;
        } else {
            return Err(Refusal::Named(errors::unknown_argument(command, word)));
        }
        i += 1;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob's items as a list, once the iterator's count (given before its first item) is
    /// checked against them.
    fn items(blob: &[u8], framed: bool) -> Result<Vec<&[u8]>, BlobError> {
        super::items(blob, framed).map(|items| {
            let count = items.len();
            let list: Vec<&[u8]> = items.collect();
            assert_eq!(list.len(), count);
            list
        })
    }

    fn framed(items: &[&[u8]]) -> Vec<u8> {
        let mut blob = Vec::new();
        for item in items {
            push_frame(&mut blob, item);
        }
        blob
    }

    #[test]
    fn lines_are_items_and_a_final_newline_starts_none() {
        let none: Vec<&[u8]> = Vec::new();
        assert_eq!(items(b"", false), Ok(none));
        assert_eq!(items(b"a\nbb\n", false), Ok(vec![&b"a"[..], b"bb"]));
        assert_eq!(items(b"a\nbb", false), Ok(vec![&b"a"[..], b"bb"]));
        // An empty line is the empty item; a lone newline is one empty item.
        assert_eq!(items(b"a\n\nb\n", false), Ok(vec![&b"a"[..], b"", b"b"]));
        assert_eq!(items(b"\n", false), Ok(vec![&b""[..]]));
        assert_eq!(items(b"\n\n", false), Ok(vec![&b""[..], b""]));
        // No separator at all: one item.
        assert_eq!(items(b"just one", false), Ok(vec![&b"just one"[..]]));
        // CRLF: the \r stays in the item.
        assert_eq!(items(b"a\r\nb\r\n", false), Ok(vec![&b"a\r"[..], b"b\r"]));
    }

    #[test]
    fn lines_cut_where_a_byte_by_byte_split_does_across_chunk_edges() {
        // Items of every length around the 64-byte chunk, so newlines fall on each side of
        // every chunk boundary and in the zero-padded tail.
        for width in 0..140 {
            for count in 1..6 {
                let lines: Vec<Vec<u8>> = (0..count)
                    .map(|i| {
                        (0..(width + i) % 131)
                            .map(|b| b'a' + (b % 26) as u8)
                            .collect()
                    })
                    .collect();
                let blob = lines.join(&b'\n');
                // The contract's edges: no items in an empty blob, none after a final newline.
                let body = blob.strip_suffix(b"\n").unwrap_or(&blob);
                let expected: Vec<&[u8]> = match blob.is_empty() {
                    true => Vec::new(),
                    false => body.split(|&b| b == b'\n').collect(),
                };
                assert_eq!(
                    items(&blob, false),
                    Ok(expected),
                    "width {width}, count {count}"
                );
            }
        }
    }

    #[test]
    fn newline_counts_agree_with_a_byte_by_byte_count() {
        // Runs of newlines past the 255 rounds a byte lane counts before its sum is taken,
        // every length around the 16-byte parts, and newlines among other bytes.
        let dense = vec![b'\n'; 255 * 16 * 3 + 40];
        for len in (0..200)
            .chain(255 * 16 - 20..255 * 16 + 40)
            .chain([dense.len()])
        {
            assert_eq!(count_newlines(&dense[..len]), len, "{len} newlines");
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in (0..3000).step_by(7).chain([255 * 16 * 2 + 5, 100_000]) {
            let blob: Vec<u8> = (0..len)
                .map(|_| {
                    state = crate::hash::mix64(state);
                    [b'\n', b'a', b'\r', 0xff][(state % 4) as usize]
                })
                .collect();
            let expected = blob.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count_newlines(&blob), expected, "{len} random bytes");
        }
    }

    #[test]
    fn frames_hold_any_byte_and_a_short_frame_refuses_the_blob() {
        let blob = framed(&[b"a\nb", b"", b"\0\xff"]);
        assert_eq!(items(&blob, true), Ok(vec![&b"a\nb"[..], b"", b"\0\xff"]));
        let none: Vec<&[u8]> = Vec::new();
        assert_eq!(items(b"", true), Ok(none));
        // The last frame runs one byte past the end.
        let short = &blob[..blob.len() - 1];
        assert_eq!(
            items(short, true),
            Err(BlobError::Truncated {
                offset: 11,
                length: 2
            })
        );
        // A length of 2^32 - 1 with nothing after it.
        let mut huge = framed(&[b"x"]);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            items(&huge, true),
            Err(BlobError::Truncated {
                offset: 5,
                length: u64::from(u32::MAX)
            })
        );
        // Three bytes of a length.
        assert_eq!(
            items(&[1, 0, 0], true),
            Err(BlobError::PartialLength { offset: 0 })
        );
        assert!(BlobError::PartialLength { offset: 0 }
            .reply()
            .contains("nothing was changed"));
    }

    #[test]
    fn taken_items_are_framed_and_refused_ones_left_out() {
        let items: [&[u8]; 3] = [b"a", b"", b"c"];
        let taken = |answers: &[u8]| taken(items.iter().copied(), answers);
        assert_eq!(taken(b"1E0"), Some(framed(&[b"a", b"c"])));
        assert_eq!(taken(b"0E1"), Some(framed(&[b"a", b"c"])));
        assert_eq!(taken(b"E1E"), Some(framed(&[b""])));
        assert_eq!(taken(b"EEE"), None);
    }

    #[test]
    fn words_between_key_and_blob() {
        let parse = |line: &str, window: bool| {
            let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
            words(&argv, "BF.BULKADD", window)
        };
        assert_eq!(parse("BF.BULKADD k blob", true), Ok(BulkWords::default()));
        assert_eq!(
            parse("BF.BULKADD k framed NOREFRESH AT 1000 blob", true),
            Ok(BulkWords {
                framed: true,
                at: Some(1000),
                norefresh: true
            })
        );
        // The blob is the last argument, whatever it holds: here the word FRAMED itself.
        assert_eq!(parse("BF.BULKADD k FRAMED", true), Ok(BulkWords::default()));
        assert_eq!(parse("BF.BULKADD k", true), Err(Refusal::Arity));
        assert_eq!(parse("BF.BULKADD k AT blob", true), Err(Refusal::Arity));
        assert!(matches!(
            parse("BF.BULKADD k FRAMED FRAMED blob", true),
            Err(Refusal::Named(e)) if e == "ERR FRAMED is given twice"
        ));
        assert!(matches!(
            parse("CF.BULKADD k NOREFRESH blob", false),
            Err(Refusal::Named(e)) if e.contains("unknown argument 'NOREFRESH'")
        ));
    }
}
