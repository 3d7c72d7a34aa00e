//! The SCANDUMP / LOADCHUNK stream engine every kind's stream runs on: the steps a client
//! follows ([`Scan`]), the data of several arrays as one byte stream (a chunk from a position,
//! a chunk loaded back), the refusals ([`DumpError`]), and a reader of a header's
//! little-endian fields. It knows no kind and no header: each kind's `scandump.rs` uses it.

use std::borrow::Cow;

use crate::codec::DecodeError;

/// Largest chunk of data in one SCANDUMP reply (RedisBloom's 16 MiB, for both kinds).
pub const MAX_CHUNK: usize = 16 << 20;

/// Why a header or a chunk was refused (either kind's stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpError {
    /// Not a valid header (the check that fired), or a chunk with an impossible iterator.
    BadData(Option<DecodeError>),
    /// The chunk's position is in no bit or slot array.
    NoLink,
    /// The chunk runs past the end of its array.
    TooBig,
    /// The header describes more storage than the per-filter limit.
    TooLarge {
        /// Bytes the header asks for.
        needed: u64,
        /// The per-filter limit.
        limit: u64,
    },
}

impl From<DecodeError> for DumpError {
    fn from(e: DecodeError) -> Self {
        DumpError::BadData(Some(e))
    }
}

/// Refuses a header that describes more storage than the per-filter limit, before anything is
/// allocated, so a header cannot make the server allocate past the limit even briefly.
pub(crate) fn check_limit(needed: u64, max_bytes: u64) -> Result<(), DumpError> {
    if needed > max_bytes {
        return Err(DumpError::TooLarge {
            needed,
            limit: max_bytes,
        });
    }
    Ok(())
}

/// One step of SCANDUMP (either kind).
#[derive(Debug, PartialEq)]
pub enum Scan<'a> {
    /// Iterator 0: the header; the next iterator is 1.
    Header(Vec<u8>),
    /// Data, with the iterator that fetches what follows.
    Chunk {
        /// The iterator of the next step.
        next: i64,
        /// The bytes of this step: a slice of a kind's array, or (a growing filter's chunk
        /// records) bytes made for the step.
        data: Cow<'a, [u8]>,
    },
    /// Past the end (or a negative iterator).
    End,
}

/// The data step at `iterator >= 1` of a stream whose iterators count records (a growing
/// filter's chunks or lines), not bytes: `piece` makes the step of the records from `iterator
/// - 1` and says the record after its last; the step answers with that record's iterator.
/// End from record `records` on, or for an iterator below 1.
pub(crate) fn record_step<'a>(
    iterator: i64,
    records: u64,
    piece: impl FnOnce(u64) -> (Vec<u8>, u64),
) -> Scan<'a> {
    let first = iterator.checked_sub(1).and_then(|p| u64::try_from(p).ok());
    match first {
        Some(first) if first < records => {
            let (data, next) = piece(first);
            Scan::Chunk {
                next: (next + 1) as i64,
                data: Cow::Owned(data),
            }
        }
        _ => Scan::End,
    }
}

/// The first record of a step of `count` records that LOADCHUNK got with `iterator` (the one
/// its SCANDUMP answered, which names the record after its last).
pub(crate) fn first_record(iterator: i64, count: u64) -> Result<u64, DumpError> {
    u64::try_from(iterator)
        .ok()
        .and_then(|it| it.checked_sub(1 + count))
        .ok_or(DumpError::BadData(None))
}

/// How much of an array a chunk takes from its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkRule {
    /// From the position to the array's end, at most [`MAX_CHUNK`] (RedisBloom's Bloom stream).
    FromPosition,
    /// An array of at most [`MAX_CHUNK`] whole, whatever the position inside it; a larger one
    /// as [`ChunkRule::FromPosition`] (RedisBloom's cuckoo stream).
    WholeSmallArrays,
}

/// The data step at `iterator >= 1` over arrays that form one byte stream: position
/// `iterator - 1`, answered with the iterator `iterator + len` that fetches the next one.
pub(crate) fn scan_arrays<'a>(arrays: &[&'a [u8]], iterator: i64, rule: ChunkRule) -> Scan<'a> {
    let Some(position) = iterator.checked_sub(1).and_then(|p| u64::try_from(p).ok()) else {
        return Scan::End;
    };
    let Some((i, start)) = locate(arrays.iter().map(|a| a.len() as u64), position) else {
        return Scan::End;
    };
    let array = arrays[i];
    let data = if rule == ChunkRule::WholeSmallArrays && array.len() <= MAX_CHUNK {
        array
    } else {
        &array[start..array.len().min(start + MAX_CHUNK)]
    };
    Scan::Chunk {
        next: iterator + data.len() as i64,
        data: Cow::Borrowed(data),
    }
}

/// Every data step from iterator 1 on, in order: `(next_iterator, chunk)`, the sequence a
/// client gets by following the iterators. The AOF rewrite emits it.
pub(crate) fn chunks_of<'a>(
    scan: impl Fn(i64) -> Scan<'a>,
) -> impl Iterator<Item = (i64, Cow<'a, [u8]>)> {
    let mut iterator = 1i64;
    std::iter::from_fn(move || match scan(iterator) {
        Scan::Chunk { next, data } => {
            iterator = next;
            Some((next, data))
        }
        _ => None,
    })
}

/// Copies a data chunk sent with `iterator` (the one SCANDUMP returned alongside it) into the
/// arrays of one byte stream: the chunk covers positions `iterator - len - 1 ..`, inside one
/// array.
pub(crate) fn load_arrays(
    mut arrays: Vec<&mut [u8]>,
    iterator: i64,
    data: &[u8],
) -> Result<(), DumpError> {
    let len = data.len() as u64;
    if iterator <= 0 || (iterator as u64) < len {
        return Err(DumpError::BadData(None));
    }
    let pos = (iterator as u64 - len)
        .checked_sub(1)
        .ok_or(DumpError::NoLink)?;
    let (i, start) = locate(arrays.iter().map(|a| a.len() as u64), pos).ok_or(DumpError::NoLink)?;
    let dst = arrays[i]
        .get_mut(start..)
        .and_then(|rest| rest.get_mut(..data.len()))
        .ok_or(DumpError::TooBig)?;
    dst.copy_from_slice(data);
    Ok(())
}

/// The array (of the given lengths) holding byte `pos` of the concatenated data, and the
/// offset inside it.
fn locate(lengths: impl Iterator<Item = u64>, pos: u64) -> Option<(usize, usize)> {
    let mut base = 0u64;
    for (i, len) in lengths.enumerate() {
        if pos < base + len {
            return Some((i, (pos - base) as usize));
        }
        base += len;
    }
    None
}

/// Little-endian field reader over a header whose length was checked already.
pub(crate) struct Fields<'a>(pub(crate) &'a [u8]);

impl Fields<'_> {
    pub(crate) fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().expect("split at N")
    }
    pub(crate) fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub(crate) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub(crate) fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
}
