//! The data types, `MBbloom--` (Bloom filters), `MBbloomCF` (cuckoo filters) and `bloomfltr`
//! (valkey-bloom's filters, which stay valkey-bloom's type), as the module's values see them:
//! [`Stored`] (what a value does for its type's callbacks: encode, dump, digest, measure,
//! defrag) and [`Registered`] (a type, and how its RDB values decode). The callbacks
//! themselves, written once over these traits, are `crate::ffi::types`.

use std::ffi::{c_int, CStr};

use crate::stats::{self, Counters, Gauges};
use rsbloom_core::codec::{FieldReader, FieldWriter};
use rsbloom_core::cuckoo::{rdb as cuckoo_rdb, scandump as cuckoo_scandump};
use rsbloom_core::defrag::Defrag;
use rsbloom_core::valkey::{load as valkey_load, rdb as valkey_rdb};
use rsbloom_core::{memory, rdb, scandump};
use rsbloom_core::{Cuckoo, DecodeError, Filter};

/// A value this module stores under a key: a Bloom filter ([`Filter`], of type `MBbloom--`, or
/// `bloomfltr` for a valkey-bloom filter) or a cuckoo filter ([`Cuckoo`], `MBbloomCF`). The
/// type callbacks below are written once, over this trait.
pub trait Stored: Clone + 'static {
    /// The data type this value is stored as.
    fn value_type(&self) -> ValueType;
    /// The data types a key holding a value of this kind may have.
    const VALUE_TYPES: &'static [ValueType];
    /// The command that rebuilds a value from its SCANDUMP stream (the AOF rewrite's).
    const LOADCHUNK: &'static CStr;
    fn encode(&self, w: &mut impl FieldWriter);
    /// valkey-bloom's `BF.LOAD` blob, which the AOF rewrite writes instead of the SCANDUMP
    /// stream for a valkey-bloom filter (so that valkey-bloom replays it too).
    fn load_blob(&self) -> Option<Vec<u8>>;
    /// The SCANDUMP stream: `emit(1, header)`, then `emit(next, chunk)` per chunk.
    fn dump(&self, emit: &mut dyn FnMut(i64, &[u8]));
    /// Everything DEBUG DIGEST covers but the item count: header, then every array.
    fn digest_parts(&self, add: &mut dyn FnMut(&[u8]));
    /// MEMORY USAGE's figure for the value: what its blocks take from the allocator, and the
    /// server's own record of it.
    fn memory_usage(&self) -> u64;
    /// What INFO's gauges follow: the bytes of bits or slots (also the work of freeing the
    /// value) and the item count (also what DEBUG DIGEST ends with).
    fn gauges(&self) -> Gauges;
    /// This kind's INFO counters.
    fn counters() -> &'static Counters;
    /// Moves the value's blocks where the walk's mover says (active defrag).
    fn defrag(&mut self, walk: &mut Defrag);
}

/// The module's data types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// `MBbloom--`: rsbloom's Bloom and window filters, and RedisBloom's.
    Bloom,
    /// `bloomfltr`: valkey-bloom's filters.
    Valkey,
    /// `MBbloomCF`: cuckoo filters.
    Cuckoo,
}

impl Stored for Filter {
    fn value_type(&self) -> ValueType {
        match self {
            Filter::Valkey(_) => ValueType::Valkey,
            _ => ValueType::Bloom,
        }
    }
    const VALUE_TYPES: &'static [ValueType] = &[ValueType::Bloom, ValueType::Valkey];
    const LOADCHUNK: &'static CStr = c"BF.LOADCHUNK";
    fn encode(&self, w: &mut impl FieldWriter) {
        rdb::encode(self, w);
    }
    fn load_blob(&self) -> Option<Vec<u8>> {
        match self {
            Filter::Valkey(v) => Some(valkey_load::encode(v)),
            _ => None,
        }
    }
    fn dump(&self, emit: &mut dyn FnMut(i64, &[u8])) {
        emit(1, &scandump::header(self));
        for (next, data) in scandump::chunks(self) {
            emit(next, &data);
        }
    }
    fn digest_parts(&self, add: &mut dyn FnMut(&[u8])) {
        add(&scandump::header(self));
        for part in scandump::digest_parts(self) {
            add(&part);
        }
    }
    fn memory_usage(&self) -> u64 {
        self.heap_bytes() + memory::SERVER_VALUE_BYTES
    }
    fn gauges(&self) -> Gauges {
        Gauges {
            bytes: self.bit_bytes(),
            items: self.added(),
        }
    }
    fn counters() -> &'static Counters {
        &stats::BLOOM
    }
    fn defrag(&mut self, walk: &mut Defrag) {
        Filter::defrag(self, walk);
    }
}

impl Stored for Cuckoo {
    fn value_type(&self) -> ValueType {
        ValueType::Cuckoo
    }
    const VALUE_TYPES: &'static [ValueType] = &[ValueType::Cuckoo];
    const LOADCHUNK: &'static CStr = c"CF.LOADCHUNK";
    fn encode(&self, w: &mut impl FieldWriter) {
        cuckoo_rdb::encode(self, w);
    }
    fn load_blob(&self) -> Option<Vec<u8>> {
        None
    }
    fn dump(&self, emit: &mut dyn FnMut(i64, &[u8])) {
        emit(1, &cuckoo_scandump::header(self));
        for (next, data) in cuckoo_scandump::chunks(self) {
            emit(next, &data);
        }
    }
    fn digest_parts(&self, add: &mut dyn FnMut(&[u8])) {
        add(&cuckoo_scandump::header(self));
        for slots in self.slot_arrays() {
            add(slots);
        }
    }
    fn memory_usage(&self) -> u64 {
        self.heap_bytes() + memory::SERVER_VALUE_BYTES
    }
    fn gauges(&self) -> Gauges {
        Gauges {
            bytes: self.slot_bytes(),
            items: self.items(),
        }
    }
    fn counters() -> &'static Counters {
        &stats::CUCKOO
    }
    fn defrag(&mut self, walk: &mut Defrag) {
        Cuckoo::defrag(self, walk);
    }
}

/// A registered data type: the values it holds and how its RDB values decode.
pub trait Registered {
    /// Its values.
    type Value: Stored;
    /// What the load warning calls them.
    const WHAT: &'static str;
    /// Reads a value of encoding version `encver`.
    fn decode(r: &mut impl FieldReader, encver: c_int) -> Result<Self::Value, DecodeError>;
}

/// `MBbloom--`: rsbloom's Bloom filters, and RedisBloom's.
pub struct BloomValues;

impl Registered for BloomValues {
    type Value = Filter;
    const WHAT: &'static str = "bloom filter";
    fn decode(r: &mut impl FieldReader, encver: c_int) -> Result<Filter, DecodeError> {
        rdb::decode_version(r, encver)
    }
}

/// `bloomfltr`: valkey-bloom's filters.
pub struct ValkeyValues;

impl Registered for ValkeyValues {
    type Value = Filter;
    const WHAT: &'static str = "valkey-bloom filter";
    fn decode(r: &mut impl FieldReader, encver: c_int) -> Result<Filter, DecodeError> {
        valkey_rdb::decode(r, encver).map(Filter::from)
    }
}

/// `MBbloomCF`: cuckoo filters, rsbloom's and RedisBloom's.
pub struct CuckooValues;

impl Registered for CuckooValues {
    type Value = Cuckoo;
    const WHAT: &'static str = "cuckoo filter";
    fn decode(r: &mut impl FieldReader, encver: c_int) -> Result<Cuckoo, DecodeError> {
        cuckoo_rdb::decode(r, encver)
    }
}
