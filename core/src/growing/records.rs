//! The chunk records both of a growing filter's serialised forms carry (the RDB value's pieces,
//! SCANDUMP's data steps): per chunk, in address order, `u32 entries`, seven `u16` group starts
//! (the entries before groups 1 to 7; 0 past a chunk's groups), then the words its entries use
//! (`Shape::words(entries)`), all little-endian. A piece holds whole records, so each
//! piece decodes on its own (a LOADCHUNK step, an RDB string).

use crate::codec::DecodeError;
use crate::growing::chunk::{Chunk, MAX_GROUPS};
use crate::growing::filter::Growing;

/// Bytes of a record before its words: the entry count and the group starts.
const RECORD_HEAD: usize = 4 + 2 * (MAX_GROUPS - 1);

/// Records of the chunks from `first`, as many as fit in `max_bytes` (at least one): the bytes
/// and the chunk after the last one taken. Empty past the last chunk.
pub(crate) fn piece(g: &Growing, first: u64, max_bytes: usize) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let mut next = first;
    while next < g.chunk_count() {
        let chunk = g.chunk(next);
        let words = chunk.used_words(g.shape);
        let size = RECORD_HEAD + words.len() * 8;
        if !out.is_empty() && out.len() + size > max_bytes {
            break;
        }
        out.extend((chunk.entries() as u32).to_le_bytes());
        for start in chunk.starts() {
            out.extend(start.to_le_bytes());
        }
        for w in words {
            out.extend(w.to_le_bytes());
        }
        next += 1;
    }
    (out, next)
}

/// Every piece of at most `max_bytes`, in order, with the chunk each starts at.
pub(crate) fn pieces(g: &Growing, max_bytes: usize) -> impl Iterator<Item = (u64, Vec<u8>)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < g.chunk_count()).then(|| {
            let (bytes, next) = piece(g, at, max_bytes);
            let start = std::mem::replace(&mut at, next);
            (start, bytes)
        })
    })
}

/// Decodes the records of `data`, each checked; nothing is installed yet.
pub(crate) fn decode(g: &Growing, mut data: &[u8]) -> Result<Vec<Chunk>, DecodeError> {
    let bad = DecodeError::GrowingChunk;
    let mut decoded = Vec::new();
    while !data.is_empty() {
        let (head, rest) = data.split_first_chunk::<RECORD_HEAD>().ok_or(bad)?;
        let entries = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let mut starts = [0u16; MAX_GROUPS - 1];
        for (start, bytes) in starts.iter_mut().zip(head[4..].chunks_exact(2)) {
            *start = u16::from_le_bytes([bytes[0], bytes[1]]);
        }
        let words = g.shape.words(entries as usize);
        let bytes = rest.get(..words * 8).ok_or(bad)?;
        let saved: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        decoded.push(Chunk::from_saved(g.shape, entries, starts, &saved).ok_or(bad)?);
        data = &rest[words * 8..];
    }
    Ok(decoded)
}

/// Puts decoded chunks at `first` on, when they all fit in the table; returns the chunk after
/// the last one.
pub(crate) fn install(g: &mut Growing, first: u64, chunks: Vec<Chunk>) -> Result<u64, DecodeError> {
    let end = first
        .checked_add(chunks.len() as u64)
        .filter(|&end| end <= g.chunk_count())
        .ok_or(DecodeError::GrowingChunk)?;
    for (i, chunk) in (first..).zip(chunks) {
        g.replace_chunk(i, chunk);
    }
    Ok(end)
}
