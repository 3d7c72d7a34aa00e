//! A window filter's SCANDUMP header, the window dialect (the layout is in [`crate::scandump`]).

use crate::codec::DecodeError;
use crate::scandump::engine::{check_limit, DumpError, Fields};
use crate::scandump::options::{COMMON_HEADER, OPT_RING, WINDOW_OPTIONS};
use crate::window::common::WindowHead;
use crate::window::partitioned::builder::{SliceHeader, SlidingBuilder, SlidingHeader};
use crate::window::partitioned::Sliding;

/// Bytes of the window's own fields after the common 20.
const WINDOW_FIELDS: usize = WindowHead::DUMP_BYTES + 2 * 4 + 4 * 8;
/// Bytes of one slice's header.
const SLICE_HEADER: usize = 64;

/// The window dialect's header.
pub(crate) fn header(f: &Sliding) -> Vec<u8> {
    let h = SlidingHeader::of(f);
    let n = f.slices().len();
    let mut out = Vec::with_capacity(COMMON_HEADER + WINDOW_FIELDS + SLICE_HEADER * n);
    out.extend_from_slice(&h.added.to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    let ring = if h.ring { OPT_RING } else { 0 };
    out.extend_from_slice(&(WINDOW_OPTIONS | ring).to_le_bytes());
    out.extend_from_slice(&(h.expansion as u32).to_le_bytes());
    h.head.dump(&mut out);
    out.extend_from_slice(&(h.hashes as u32).to_le_bytes());
    out.extend_from_slice(&(h.generations as u32).to_le_bytes());
    for v in [h.base_capacity, h.base_bits, h.clock, h.next_generation] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for slice in f.slices() {
        for v in SliceHeader::of(slice).fields() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// The window dialect after the first 20 bytes.
pub(crate) fn from_header(
    mut f: Fields,
    added: u64,
    nslices: u32,
    expansion: u32,
    ring: bool,
    max_bytes: u64,
) -> Result<Sliding, DumpError> {
    let n = nslices as usize;
    if f.0.len() != WINDOW_FIELDS + SLICE_HEADER * n {
        return Err(DumpError::from(DecodeError::HeaderLength));
    }
    let header = SlidingHeader {
        head: WindowHead::undump(&mut f),
        hashes: u64::from(f.u32()),
        generations: u64::from(f.u32()),
        base_capacity: f.u64(),
        base_bits: f.u64(),
        expansion: u64::from(expansion),
        clock: f.u64(),
        added,
        next_generation: f.u64(),
        slices: u64::from(nslices),
        ring,
    };
    let slices: Vec<SliceHeader> = (0..n)
        .map(|_| SliceHeader::from_fields(std::array::from_fn(|_| f.u64())))
        .collect();
    let needed = slices
        .iter()
        .fold(header.ring_bytes(), |sum, s| sum.saturating_add(s.bits / 8));
    // Before the builder allocates the ring: the limit holds before anything is allocated.
    check_limit(needed, max_bytes)?;
    let mut builder = SlidingBuilder::new(header)?;
    for slice in slices {
        builder.slice(slice)?;
    }
    builder.finish().map_err(DumpError::from)
}
