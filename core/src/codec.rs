//! The one decoder skeleton. Every serialised form (rsbloom's RDB values, RedisBloom's RDB
//! encodings, the SCANDUMP headers) reads its own fields through [`FieldReader`], then builds
//! the filter through its kind's builder, which owns every invariant a loaded value must hold:
//! [`crate::bloom::builder::ChainBuilder`], [`crate::window::partitioned::builder::SlidingBuilder`],
//! [`crate::cuckoo::builder::CuckooBuilder`]. A check that fires names itself in
//! [`DecodeError`], so a test can assert which one.

use std::fmt;

/// Why a serialised filter was refused: which check fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended early, held a field of another type, or Redis reported a read error.
    Read(&'static str),
    /// An encoding version this build does not read.
    UnknownEncoding,
    /// Flag or option bits this build does not know.
    UnknownFlags,
    /// No links, or more than [`MAX_LINKS`](crate::bloom::chain::MAX_LINKS).
    LinkCount,
    /// A scaling chain without expansion, or an expansion past 32 bits.
    Expansion,
    /// A link layout tag this build does not know.
    UnknownLayout,
    /// A link capacity of 0.
    Capacity,
    /// A link error rate outside (0, 1).
    ErrorRate,
    /// A link hash count of 0 or above [`MAX_LINK_HASHES`](crate::sizing::MAX_LINK_HASHES).
    HashCount,
    /// A link bit count of 0, not whole 64-bit words, or above [`MAX_LINK_BITS`](crate::sizing::MAX_LINK_BITS).
    BitCount,
    /// A RedisBloom power-of-two link whose bit count is not `2^n2`.
    PowerOfTwo,
    /// A RedisBloom link whose hash count is not `ceil(ln 2 * bits per entry)`.
    BitsPerEntry,
    /// The links' item counts overflow or do not add up to the chain's.
    ItemSum,
    /// The links together would take more than this machine's memory (RAM and swap).
    MachineMemory,
    /// The allocator refused the memory for the filter.
    OutOfMemory,
    /// An empty piece of a bit array.
    EmptyPiece,
    /// A piece of a bit array running past the end of its link.
    LongPiece,
    /// A SCANDUMP header whose length is not what its link count says.
    HeaderLength,
    /// A window filter's parameters that no window filter has (kind, window, hashes,
    /// generations, base slice).
    WindowParameters,
    /// A window filter's slice count: over the limit, or neither 0 nor at least `k`.
    SliceCount,
    /// A slice whose numbers cannot be: generations out of order, an open generation that is
    /// not the newest, counts over its load or its load over its capacity.
    SliceState,
    /// A slice in the ring whose place another slice holds.
    RingPlace,
    /// A sub-filter count: 0, or for a cuckoo filter over 65535 or not what its header said.
    FilterCount,
    /// A cuckoo bucket size of 0 or above 255.
    BucketSize,
    /// A cuckoo filter's max iterations of 0 or above 65535.
    Iterations,
    /// A cuckoo expansion that is neither 0 nor a power of two up to 32768, or 0 with more
    /// than one sub-filter.
    CuckooExpansion,
    /// A sub-filter bucket count that is 0, not a power of two, 2^56 or more, or (the first)
    /// not the header's.
    Buckets,
    /// A slot array whose length is not its buckets × the bucket size.
    SlotArray,
    /// A valkey-bloom bit array whose header is short or not of version 1.
    BitmapHeader,
    /// A valkey-bloom filter whose seed flag is neither 0 nor 1, or whose seed is not
    /// valkey-bloom's fixed one although the flag says it is not random.
    Seed,
    /// Bytes left over after a valkey-bloom `BF.LOAD` blob.
    TrailingBytes,
    /// A growing filter's parameters that no growing filter has (widths, levels, split
    /// pointer, items past what its chunks hold).
    GrowingParameters,
    /// A growing filter's chunk record that does not decode: cut short, past the last chunk,
    /// or words that disagree with its entry count.
    GrowingChunk,
    /// A one-line growing filter's line or overflow entry that no insert leaves: cut short,
    /// past the last line, or fields that disagree.
    GrowingLine,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            DecodeError::Read(what) => what,
            DecodeError::UnknownEncoding => "unknown encoding version",
            DecodeError::UnknownFlags => "unknown flags or options",
            DecodeError::LinkCount => "bad link count",
            DecodeError::Expansion => "bad expansion (a scaling filter needs 1 to 2^32-1)",
            DecodeError::UnknownLayout => "unknown link layout",
            DecodeError::Capacity => "link capacity 0",
            DecodeError::ErrorRate => "link error rate outside (0, 1)",
            DecodeError::HashCount => "bad link hash count",
            DecodeError::BitCount => "bad link bit count",
            DecodeError::PowerOfTwo => "power-of-two link whose bit count is not 2^n2",
            DecodeError::BitsPerEntry => "link hash count disagrees with its bits per entry",
            DecodeError::ItemSum => "link item counts disagree with the filter's",
            DecodeError::MachineMemory => "filter larger than this machine's memory",
            DecodeError::OutOfMemory => "the server refused the memory for the filter",
            DecodeError::EmptyPiece => "empty bit-array piece",
            DecodeError::LongPiece => "bit-array piece longer than its link",
            DecodeError::HeaderLength => "header length disagrees with its link count",
            DecodeError::WindowParameters => "bad window filter parameters",
            DecodeError::SliceCount => "bad window slice count",
            DecodeError::SliceState => "bad window slice state",
            DecodeError::RingPlace => "two window slices in one place of the ring",
            DecodeError::FilterCount => "bad sub-filter count",
            DecodeError::BucketSize => "bad cuckoo bucket size (1 to 255)",
            DecodeError::Iterations => "bad cuckoo max iterations (1 to 65535)",
            DecodeError::CuckooExpansion => {
                "bad cuckoo expansion (0 with one sub-filter, or a power of two up to 32768)"
            }
            DecodeError::Buckets => "bad cuckoo bucket count",
            DecodeError::SlotArray => "cuckoo slot array length disagrees with its buckets",
            DecodeError::BitmapHeader => "bad valkey-bloom bit array header",
            DecodeError::Seed => "bad valkey-bloom seed or seed flag",
            DecodeError::TrailingBytes => "bytes after the end of the filter",
            DecodeError::GrowingParameters => "bad growing filter parameters",
            DecodeError::GrowingChunk => "bad growing filter chunk",
            DecodeError::GrowingLine => "bad growing filter line",
        };
        f.write_str(text)
    }
}

/// Bytes of RAM plus swap, when the OS tells.
pub fn machine_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysinfo is plain integers, for which all-zero bytes are a valid value.
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable sysinfo struct.
        if unsafe { libc::sysinfo(&mut info) } == 0 {
            let unit = u64::from(info.mem_unit.max(1));
            let total = (info.totalram as u64).saturating_add(info.totalswap as u64);
            return Some(total.saturating_mul(unit));
        }
    }
    None
}

/// Sink of typed fields (Redis's module RDB I/O, or a `Vec<Field>` in tests).
pub trait FieldWriter {
    /// An unsigned 64-bit field.
    fn unsigned(&mut self, v: u64);
    /// A double field.
    fn double(&mut self, v: f64);
    /// A byte-string field.
    fn bytes(&mut self, v: &[u8]);
}

/// Source of typed fields; every read may fail (truncated or corrupt input).
pub trait FieldReader {
    /// An unsigned 64-bit field.
    fn unsigned(&mut self) -> Result<u64, DecodeError>;
    /// A double field.
    fn double(&mut self) -> Result<f64, DecodeError>;
    /// Reads one string field into the start of `dst` and returns its length; a field longer
    /// than `dst` is [`DecodeError::LongPiece`].
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError>;
    /// Reads one whole string field of at most `max` bytes; a longer one is
    /// [`DecodeError::LongPiece`].
    fn bytes(&mut self, max: u64) -> Result<Vec<u8>, DecodeError>;
}

/// Largest piece of a bit or slot array stored as one string field. Below jemalloc's 8 MiB
/// "oversize" threshold, so the buffer Redis allocates per piece (LZF output on save, the read
/// buffer on load) is recycled, warm in cache, instead of being mapped, zeroed by the kernel
/// and unmapped each time: a 1 GiB filter saved in 16 MiB pieces took 7.4 s to load, in 4 MiB
/// pieces 5.2 s.
pub const CHUNK_BYTES: usize = 4 << 20;

/// Writes an array as consecutive string fields of at most [`CHUNK_BYTES`] (none when empty).
pub fn write_pieces(w: &mut impl FieldWriter, bytes: &[u8]) {
    for piece in bytes.chunks(CHUNK_BYTES) {
        w.bytes(piece);
    }
}

/// Fills `dst` from consecutive non-empty string fields (a bit array's pieces).
pub fn read_pieces(r: &mut impl FieldReader, mut dst: &mut [u8]) -> Result<(), DecodeError> {
    while !dst.is_empty() {
        match r.bytes_into(dst)? {
            0 => return Err(DecodeError::EmptyPiece),
            n => dst = &mut dst[n..],
        }
    }
    Ok(())
}

/// In-memory field stream, for tests and fuzzing.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Field {
    #[default]
    /// No field (the default, never written).
    None,
    /// An unsigned 64-bit field.
    Unsigned(u64),
    /// A double field.
    Double(f64),
    /// A byte-string field.
    Bytes(Vec<u8>),
}

impl FieldWriter for Vec<Field> {
    fn unsigned(&mut self, v: u64) {
        self.push(Field::Unsigned(v));
    }
    fn double(&mut self, v: f64) {
        self.push(Field::Double(v));
    }
    fn bytes(&mut self, v: &[u8]) {
        self.push(Field::Bytes(v.to_vec()));
    }
}

/// Reads back a `Vec<Field>`.
pub struct FieldSlice<'a>(pub &'a [Field]);

impl FieldSlice<'_> {
    fn next(&mut self) -> Result<&Field, DecodeError> {
        let (first, rest) = self.0.split_first().ok_or(DecodeError::Read("truncated"))?;
        self.0 = rest;
        Ok(first)
    }
}

impl FieldReader for FieldSlice<'_> {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        match self.next()? {
            Field::Unsigned(v) => Ok(*v),
            _ => Err(DecodeError::Read("expected an unsigned field")),
        }
    }
    fn double(&mut self) -> Result<f64, DecodeError> {
        match self.next()? {
            Field::Double(v) => Ok(*v),
            _ => Err(DecodeError::Read("expected a double field")),
        }
    }
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError> {
        match self.next()? {
            Field::Bytes(v) if v.len() <= dst.len() => {
                dst[..v.len()].copy_from_slice(v);
                Ok(v.len())
            }
            Field::Bytes(_) => Err(DecodeError::LongPiece),
            _ => Err(DecodeError::Read("expected a string field")),
        }
    }
    fn bytes(&mut self, max: u64) -> Result<Vec<u8>, DecodeError> {
        match self.next()? {
            Field::Bytes(v) if v.len() as u64 <= max => Ok(v.clone()),
            Field::Bytes(_) => Err(DecodeError::LongPiece),
            _ => Err(DecodeError::Read("expected a string field")),
        }
    }
}

impl From<crate::memory::OutOfMemory> for DecodeError {
    fn from(_: crate::memory::OutOfMemory) -> Self {
        DecodeError::OutOfMemory
    }
}
