//! Input formats of the fuzz targets (shared with the seed generator, `examples/seeds.rs`) and
//! the invariants every decoded filter (chain, window, growing or valkey-bloom filter) must
//! satisfy. The growing filter's format (its RDB fields and chunk records, its SCANDUMP header
//! and steps) is fuzzed by the `rdb` and `chunks` targets, from seeds of growing filters.

pub mod lazy_alloc;

/// Every target allocates through [`lazy_alloc::LazyAlloc`]: the system allocator (ASan's),
/// with big zeroed blocks mapped lazily once a target reserves the region.
#[global_allocator]
static ALLOCATOR: lazy_alloc::LazyAlloc = lazy_alloc::LazyAlloc;

use rsbloom_core::codec::{Field, FieldSlice};
use rsbloom_core::growing::lines::LineFilter;
use rsbloom_core::scandump::{self, Scan};
use rsbloom_core::sizing::{MAX_LINK_BITS, MAX_LINK_HASHES};
use rsbloom_core::valkey::{load as valkey_load, rdb as valkey_rdb};
use rsbloom_core::window::partitioned::limits::OPEN;
use rsbloom_core::window::partitioned::Sliding;
use rsbloom_core::window::rotating::{Rotating, EMPTY};
use rsbloom_core::{rdb, AddOutcome, Chain, Filter, FilterError, Growing, ValkeyBloom};

/// Per-filter limit for the `chunks` target: small enough that every accepted header is cheap
/// to allocate and copy, large enough for multi-link chains.
pub const CHUNKS_LIMIT: u64 = 1 << 16;

/// `chunks` input: `u32 header_len, header`, then any number of
/// `i64 iterator, u32 len, data` records (all little-endian), as a client replays SCANDUMP into
/// LOADCHUNK.
pub fn encode_dump(header: &[u8], chunks: &[(i64, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    for (iterator, data) in chunks {
        out.extend_from_slice(&iterator.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
    }
    out
}

/// A header and the `(iterator, chunk)` pairs that follow it.
pub type Dump<'a> = (&'a [u8], Vec<(i64, &'a [u8])>);

/// Splits a `chunks` input; `None` when even the header is cut short. A truncated trailing
/// record is dropped.
pub fn decode_dump(data: &[u8]) -> Option<Dump<'_>> {
    let mut rest = data;
    let header_len = take_u32(&mut rest)? as usize;
    let header = take(&mut rest, header_len)?;
    let mut chunks = Vec::new();
    while let Some(iterator) = take(&mut rest, 8) {
        let iterator = i64::from_le_bytes(iterator.try_into().unwrap());
        let Some(len) = take_u32(&mut rest) else {
            break;
        };
        let Some(chunk) = take(&mut rest, len as usize) else {
            break;
        };
        chunks.push((iterator, chunk));
    }
    Some((header, chunks))
}

/// Field opcodes of the `rdb` input, as Redis tags each field of a module value in the RDB.
const TAG_UNSIGNED: u8 = b'u';
const TAG_DOUBLE: u8 = b'd';
const TAG_BYTES: u8 = b'b';

/// `rdb` input: `u8 encoding version`, then the value's fields, each a tag byte and its
/// payload (`u` + u64, `d` + f64, `b` + u32 length + bytes, little-endian).
pub fn encode_rdb(encver: u8, fields: &[Field]) -> Vec<u8> {
    let mut out = vec![encver];
    for f in fields {
        match f {
            Field::Unsigned(v) => {
                out.push(TAG_UNSIGNED);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Field::Double(v) => {
                out.push(TAG_DOUBLE);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Field::Bytes(b) => {
                out.push(TAG_BYTES);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Field::None => {}
        }
    }
    out
}

/// Parses an `rdb` input up to its first malformed field (what follows reads as truncated,
/// like a cut RDB).
pub fn decode_rdb(data: &[u8]) -> Option<(u8, Vec<Field>)> {
    let (&encver, mut rest) = data.split_first()?;
    let mut fields = Vec::new();
    while let Some(tag) = take(&mut rest, 1) {
        let field = match tag[0] {
            TAG_UNSIGNED => take(&mut rest, 8).map(|b| Field::Unsigned(u64_of(b))),
            TAG_DOUBLE => take(&mut rest, 8).map(|b| Field::Double(f64::from_bits(u64_of(b)))),
            TAG_BYTES => take_u32(&mut rest)
                .and_then(|len| take(&mut rest, len as usize))
                .map(|b| Field::Bytes(b.to_vec())),
            _ => None,
        };
        match field {
            Some(f) => fields.push(f),
            None => break,
        }
    }
    Some((encver, fields))
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if rest.len() < n {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

fn take_u32(rest: &mut &[u8]) -> Option<u32> {
    take(rest, 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

fn u64_of(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

/// What every filter a decoder accepted must satisfy: both serialised forms give it back
/// unchanged, and its kind's own checks (below).
pub fn check_filter(filter: &Filter, limit: u64) {
    let mut fields = Vec::new();
    rdb::encode(filter, &mut fields);
    match filter {
        // A valkey-bloom filter's RDB value is its own type's, which (as valkey-bloom's) keeps
        // the item count of the last sub-filter only: what it reads back saves the same fields.
        Filter::Valkey(_) => {
            let decoded =
                valkey_rdb::decode(&mut FieldSlice(&fields), valkey_rdb::ENCODING_VERSION)
                    .expect("own RDB value refused");
            let mut again = Vec::new();
            valkey_rdb::encode(&decoded, &mut again);
            assert_eq!(again, fields, "RDB round trip");
        }
        _ => assert_eq!(
            rdb::decode(&mut FieldSlice(&fields)).as_ref(),
            Ok(filter),
            "RDB round trip"
        ),
    }
    let header = scandump::header(filter);
    let mut copy = scandump::filter_from_header(&header, 0x0ff, u64::MAX)
        .unwrap_or_else(|e| panic!("own header refused: {e:?}"));
    for (next, data) in scandump::chunks(filter) {
        scandump::load_chunk(&mut copy, next, &data).expect("own chunk refused");
    }
    if let (Filter::Chain(a), Filter::Chain(b)) = (&mut copy, filter) {
        // A chain's header carries its seed, but a RedisBloom-layout chain takes the foreign one.
        assert_eq!(a.links(), b.links());
    } else {
        assert_eq!(&copy, filter, "SCANDUMP round trip");
    }
    match filter {
        Filter::Chain(chain) => check_chain(chain, limit),
        Filter::Sliding(sliding) => check_sliding(sliding, limit),
        Filter::Rotating(rotating) => check_rotating(rotating, limit),
        Filter::Valkey(v) => check_valkey(v, limit),
        Filter::Growing(g) => check_growing(g.as_ref(), limit),
        Filter::Lines(f) => check_growing(f.as_ref(), limit),
    }
}

/// What a growing filter of either layout answers, for [`check_growing`].
pub trait Grows: Clone + PartialEq + std::fmt::Debug {
    fn contains(&self, item: &[u8]) -> bool;
    fn add(&mut self, item: &[u8], limit: u64) -> Result<AddOutcome, FilterError>;
    fn answers(&self, items: &[Vec<u8>]) -> usize;
    fn items(&self) -> u64;
}

macro_rules! grows {
    ($kind:ty) => {
        impl Grows for $kind {
            fn contains(&self, item: &[u8]) -> bool {
                <$kind>::contains(self, item)
            }
            fn add(&mut self, item: &[u8], limit: u64) -> Result<AddOutcome, FilterError> {
                <$kind>::add(self, item, limit)
            }
            fn answers(&self, items: &[Vec<u8>]) -> usize {
                let mut answers = 0;
                self.contains_many(items.iter().map(|i| i.as_slice()), |_| answers += 1);
                answers
            }
            fn items(&self) -> u64 {
                <$kind>::items(self)
            }
        }
    };
}
grows!(Growing);
grows!(LineFilter);

/// A growing filter of either layout that loaded: adds (growing it within `limit`) and lookups
/// work without a panic or a false negative, an add answering Present only for an item that
/// read present, and a refused add changing nothing.
pub fn check_growing<G: Grows>(g: &G, limit: u64) {
    let mut grown = g.clone();
    let items: Vec<Vec<u8>> = (0..120u32)
        .map(|i| format!("fuzz-grow-{i}").into_bytes())
        .collect();
    let mut added = Vec::new();
    for item in &items {
        let before = grown.contains(item);
        let copy = grown.clone();
        match grown.add(item, limit) {
            Ok(AddOutcome::Present) => assert!(before, "present, but not before"),
            Ok(AddOutcome::Added) => added.push(item),
            Err(_) => assert_eq!(grown, copy, "a refused add changed the filter"),
        }
    }
    for item in added {
        assert!(grown.contains(item), "false negative after an add");
    }
    assert_eq!(grown.answers(&items), items.len());
    assert!(grown.items() >= g.items());
}

/// A valkey-bloom filter that loaded: its `BF.LOAD` blob gives it back, its counts agree with
/// its sub-filters, and adds (growing it within `limit`) and lookups work without a panic or a
/// false negative.
pub fn check_valkey(v: &ValkeyBloom, limit: u64) {
    assert_eq!(
        valkey_load::decode(&valkey_load::encode(v)).as_ref(),
        Ok(v),
        "BF.LOAD round trip"
    );
    assert!(!v.filters().is_empty());
    assert_eq!(v.items(), v.filters().iter().map(|f| f.items).sum::<u64>());
    for f in v.filters() {
        assert!((1..=MAX_LINK_HASHES).contains(&f.hashes()) && f.bit_count() >= 8);
        assert!(f.capacity >= 1);
    }
    let mut grown = v.clone();
    for i in 0..24u32 {
        let item = format!("fuzz-item-{i}").into_bytes();
        let before = grown.contains(&item);
        match grown.add(&item, limit) {
            Ok(AddOutcome::Present) => assert!(before, "present, but not before"),
            Ok(AddOutcome::Added) => assert!(grown.contains(&item), "false negative after an add"),
            Err(_) => assert_eq!(
                grown.contains(&item),
                before,
                "a refused add changed an answer"
            ),
        }
    }
    assert!(
        grown.bit_bytes() <= v.bit_bytes().max(limit),
        "grew past the limit"
    );
}

/// A rotating window filter that loaded: each slot holds its own generation, and reads and
/// writes at any clock work without a panic; an item just added reads present at that clock.
pub fn check_rotating(f: &Rotating, limit: u64) {
    let slots = f.slots();
    assert_eq!(slots.len(), f.generations() as usize + 1);
    for (i, s) in slots.iter().enumerate() {
        assert!(s.generation == EMPTY || s.generation % slots.len() as u64 == i as u64);
        for e in &s.extras {
            assert!(e.load <= e.capacity && e.blocks >= 1);
        }
    }
    for now in window_clocks(f.base().clock(), f.base().window()) {
        let _ = f.next_forget(now);
    }
    reads_and_writes_at_any_clock(
        Filter::from(f.clone()),
        f.base().clock(),
        f.base().window(),
        limit,
    );
}

/// A window filter that loaded: its slices hold together, and reads and writes at any clock
/// work without a panic; an item just added reads present at that clock.
pub fn check_sliding(f: &Sliding, limit: u64) {
    let slices = f.slices();
    assert!(slices.is_empty() || slices.len() >= f.hashes() as usize);
    for (i, s) in slices.iter().enumerate() {
        assert_eq!(s.ended == OPEN, i + 1 == slices.len(), "open generation");
        assert!(s.count <= s.load && s.load <= s.capacity);
    }
    reads_and_writes_at_any_clock(
        Filter::from(f.clone()),
        f.base().clock(),
        f.base().window(),
        limit,
    );
}

/// The clocks a loaded window filter is tried at: none, its own, a window on, the latest.
fn window_clocks(clock: u64, window: u64) -> [u64; 4] {
    [0, clock, clock.saturating_add(window), u64::MAX]
}

/// A window filter of either layout reads and writes at any clock without a panic, and an item
/// just added reads present at that clock.
fn reads_and_writes_at_any_clock(mut grown: Filter, clock: u64, window: u64, limit: u64) {
    for (i, now) in window_clocks(clock, window).into_iter().enumerate() {
        let item = format!("fuzz-window-{i}").into_bytes();
        grown.contains_many(std::iter::once(&item[..]), now, |_| {});
        let _ = grown.card(now);
        let mut added = false;
        // Every other clock adds without refreshing (NOREFRESH): a held item stays as it was.
        let refresh = i % 2 == 0;
        grown.add_many(std::iter::once(&item[..]), now, limit, refresh, |r| {
            added = r.is_ok();
            true
        });
        if added {
            let mut present = false;
            grown.contains_many(std::iter::once(&item[..]), now, |p| present = p);
            assert!(present, "false negative right after an add");
        }
    }
}

/// What every chain a decoder accepted must satisfy: its parameters agree with its bits, and
/// adds and lookups work without a panic or a false negative.
pub fn check_chain(chain: &Chain, limit: u64) {
    assert!(!chain.links().is_empty(), "a chain without links");
    assert_eq!(
        chain.items(),
        chain.links().iter().map(|l| l.items).sum::<u64>(),
        "chain items disagree with its links"
    );
    assert!(
        chain.is_nonscaling() || chain.expansion() >= 1,
        "scaling without expansion"
    );
    for link in chain.links() {
        let bits = link.bit_count();
        assert!(
            bits > 0 && bits % 64 == 0 && bits <= MAX_LINK_BITS,
            "{bits} bits"
        );
        assert_eq!(link.words().len() as u64 * 64, bits);
        assert!(
            (1..=MAX_LINK_HASHES).contains(&link.hashes),
            "{} hashes",
            link.hashes
        );
        assert!(link.error > 0.0 && link.error < 1.0, "error {}", link.error);
        assert!(link.capacity >= 1);
    }

    // Lookups never panic; every item added is found afterwards, across growth.
    let mut grown = chain.clone();
    let probe: Vec<Vec<u8>> = (0..24u32)
        .map(|i| format!("fuzz-item-{i}").into_bytes())
        .collect();
    for item in &probe {
        let _ = grown.contains(item);
        match grown.add(item, limit) {
            Ok(AddOutcome::Added | AddOutcome::Present) => {
                assert!(grown.contains(item), "false negative right after an add")
            }
            Err(_) => {} // full, over the limit or unable to grow: refused, nothing changed
        }
    }
    for item in &probe {
        if chain.contains(item) {
            assert!(grown.contains(item), "an add lost an existing item");
        }
    }
    assert_eq!(
        grown.items(),
        grown.links().iter().map(|l| l.items).sum::<u64>()
    );
}

/// After `load_chunk(chain, iterator, data)` succeeded, SCANDUMP from the chunk's start
/// returns those bytes. A growing filter's iterators count chunk records or lines, not bytes:
/// its records end at the chunk `iterator` names, so some step before it starts with them; a
/// one-line filter's piece ends at the line `iterator` names, and the step from its first line
/// holds its lines and, first, its overflow entries.
pub fn check_loaded_chunk(filter: &Filter, iterator: i64, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    if let Filter::Lines(_) = filter {
        let count = |d: &[u8], at: usize| u32::from_le_bytes(d[at..at + 4].try_into().unwrap());
        let (lines, entries) = (count(data, 0) as usize, count(data, 4) as usize);
        let Scan::Chunk { data: got, .. } = scandump::scan(filter, iterator - lines as i64) else {
            panic!("a loaded piece is not in the dump");
        };
        let got_lines = count(&got, 0) as usize;
        assert!(got_lines >= lines, "a step shorter than the piece loaded");
        assert_eq!(
            got[8..8 + lines * 64],
            data[8..8 + lines * 64],
            "lines not stored"
        );
        let got_entries = &got[8 + got_lines * 64..];
        let theirs = &data[8 + lines * 64..];
        assert_eq!(
            got_entries[..entries * 16],
            theirs[..],
            "overflow entries not stored"
        );
        return;
    }
    if let Filter::Growing(g) = filter {
        let found = (1..=g.chunk_count().min(4096) as i64).any(|records| {
            matches!(scandump::scan(filter, iterator - records),
                Scan::Chunk { data: got, .. } if got.starts_with(data))
        });
        assert!(found, "loaded records are not in the dump");
        return;
    }
    let start = iterator - data.len() as i64;
    match scandump::scan(filter, start) {
        Scan::Chunk { data: got, .. } => assert_eq!(&got[..data.len()], data, "chunk not stored"),
        other => panic!("a loaded chunk is not in the dump: {other:?}"),
    }
}

/// rsbloom's RDB fields of a filter (what `rdb_save` writes).
pub fn fields_of(filter: &Filter) -> Vec<Field> {
    let mut w = Vec::new();
    rdb::encode(filter, &mut w);
    w
}
