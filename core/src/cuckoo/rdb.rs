//! The RDB value of a cuckoo filter (`MBbloomCF`): rsbloom's encoding ([`ENCODING_VERSION`],
//! written and read) and RedisBloom's encodings 0 to 4 (read, for drop-in migration).
//!
//! RedisBloom's encoding 4, in module fields (`U` unsigned, `S` string):
//!
//! ```text
//! U filters   U buckets (first sub-filter)   U items   U deletes
//! U bucket size   U max iterations   U expansion
//! per sub-filter: U its buckets   S its slots (buckets × bucket size bytes)
//! ```
//!
//! Encodings 0 to 3 hold only the first three fields, then one `S` per sub-filter of `buckets`
//! buckets; their filters had bucket size 2, 20 iterations and expansion 1.
//!
//! rsbloom's encoding is encoding 4 with `U seed` after the expansion, and each slot array in
//! pieces of at most [`CHUNK_BYTES`](crate::codec::CHUNK_BYTES) (one piece below that, so a small filter's fields are
//! RedisBloom's byte for byte but for the seed). RedisBloom refuses the version (it reads up to
//! 4), so it cannot misread an rsbloom RDB.

use crate::codec::{read_pieces, write_pieces, DecodeError, FieldReader, FieldWriter};
use crate::cuckoo::builder::{CuckooBuilder, CuckooHeader};
use crate::cuckoo::filter::Cuckoo;

/// RDB encoding version of rsbloom's cuckoo format (the same number as its Bloom format's).
pub const ENCODING_VERSION: i32 = 100;

/// The newest encoding RedisBloom writes.
pub const MAX_REDISBLOOM_VERSION: i32 = 4;

/// RedisBloom's fixed parameters of encodings 0 to 3.
const OLD_BUCKET_SIZE: u64 = 2;
const OLD_MAX_ITERATIONS: u64 = 20;
const OLD_EXPANSION: u64 = 1;

/// Writes a filter in rsbloom's encoding.
pub fn encode(cf: &Cuckoo, w: &mut impl FieldWriter) {
    w.unsigned(cf.filter_count() as u64);
    w.unsigned(cf.buckets());
    w.unsigned(cf.items());
    w.unsigned(cf.deletes());
    w.unsigned(u64::from(cf.bucket_size()));
    w.unsigned(u64::from(cf.max_iterations()));
    w.unsigned(u64::from(cf.expansion()));
    w.unsigned(cf.seed());
    for (k, slots) in cf.slot_arrays().enumerate() {
        w.unsigned(cf.filter_buckets(k));
        write_pieces(w, slots);
    }
}

/// Reads a filter of encoding `encver`: rsbloom's, or RedisBloom's 0 to 4 (seed 0: RedisBloom's
/// hashing).
pub fn decode(r: &mut impl FieldReader, encver: i32) -> Result<Cuckoo, DecodeError> {
    let native = encver == ENCODING_VERSION;
    let old = match encver {
        0..=3 => true,
        MAX_REDISBLOOM_VERSION | ENCODING_VERSION => false,
        _ => return Err(DecodeError::UnknownEncoding),
    };
    let filters = r.unsigned()?;
    let buckets = r.unsigned()?;
    let items = r.unsigned()?;
    let header = if old {
        CuckooHeader {
            items,
            deletes: 0,
            buckets,
            filters,
            bucket_size: OLD_BUCKET_SIZE,
            max_iterations: OLD_MAX_ITERATIONS,
            expansion: OLD_EXPANSION,
            seed: 0,
        }
    } else {
        CuckooHeader {
            items,
            deletes: r.unsigned()?,
            buckets,
            filters,
            bucket_size: r.unsigned()?,
            max_iterations: r.unsigned()?,
            expansion: r.unsigned()?,
            seed: if native { r.unsigned()? } else { 0 },
        }
    };
    let mut builder = CuckooBuilder::new(header)?;
    for _ in 0..filters {
        let buckets = if old { buckets } else { r.unsigned()? };
        let slots = builder.filter(buckets)?;
        if native {
            read_pieces(r, slots)?;
        } else if r.bytes_into(slots)? != slots.len() {
            return Err(DecodeError::SlotArray);
        }
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{codec::Field, codec::FieldSlice, cuckoo::filter::MAX_FILTERS, CuckooSpec};

    fn filled(seed: u64) -> Cuckoo {
        // RedisBloom's defaults (bucket size 2, 20 kicks) but a growth of 2.
        let spec = CuckooSpec {
            expansion: 2,
            ..CuckooSpec::implicit(64)
        };
        let mut cf = Cuckoo::new(&spec, seed, u64::MAX).unwrap();
        for i in 0..300u32 {
            let h = cf.hash(i.to_string().as_bytes());
            cf.insert(h, MAX_FILTERS, u64::MAX).unwrap();
        }
        let h = cf.hash(b"7");
        assert!(cf.delete(h));
        cf
    }

    #[test]
    fn round_trips_with_its_seed() {
        for seed in [0, 0x1234_5678_9abc_def0] {
            let cf = filled(seed);
            assert!(cf.filter_count() > 1);
            let mut fields = Vec::new();
            encode(&cf, &mut fields);
            let back = decode(&mut FieldSlice(&fields), ENCODING_VERSION).unwrap();
            assert_eq!(back, cf);
        }
    }

    #[test]
    fn the_spec_dump_vector_loads_as_encoding_4() {
        // The fields of the spec's DUMP of test vector 1.
        let fields = [
            Field::Unsigned(1),
            Field::Unsigned(4),
            Field::Unsigned(3),
            Field::Unsigned(0),
            Field::Unsigned(2),
            Field::Unsigned(20),
            Field::Unsigned(1),
            Field::Unsigned(4),
            Field::Bytes(vec![0x01, 0x00, 0xd9, 0x00, 0x07, 0, 0, 0]),
        ];
        let cf = decode(&mut FieldSlice(&fields), 4).unwrap();
        assert_eq!((cf.items(), cf.buckets(), cf.seed()), (3, 4, 0));
        for item in [&b"item1"[..], b"foo", b""] {
            assert!(cf.contains(cf.hash(item)));
        }
        // rsbloom's encoding of it is the same fields with the seed after the expansion.
        let mut ours = Vec::new();
        encode(&cf, &mut ours);
        let mut expected = fields.to_vec();
        expected.insert(7, Field::Unsigned(0));
        assert_eq!(ours, expected);
        // Encodings 0 to 3: three fields, then one array per sub-filter of bucket size 2.
        let old = [
            Field::Unsigned(1),
            Field::Unsigned(4),
            Field::Unsigned(3),
            Field::Bytes(vec![0x01, 0x00, 0xd9, 0x00, 0x07, 0, 0, 0]),
        ];
        let back = decode(&mut FieldSlice(&old), 2).unwrap();
        assert_eq!(back, cf);
    }

    #[test]
    fn forged_values_name_the_check_that_refused_them() {
        let good = || {
            vec![
                Field::Unsigned(1),
                Field::Unsigned(4),
                Field::Unsigned(3),
                Field::Unsigned(0),
                Field::Unsigned(2),
                Field::Unsigned(20),
                Field::Unsigned(1),
                Field::Unsigned(4),
                Field::Bytes(vec![0; 8]),
            ]
        };
        let with = |at: usize, field: Field| {
            let mut f = good();
            f[at] = field;
            f
        };
        let cases = [
            (with(0, Field::Unsigned(0)), DecodeError::FilterCount),
            (with(0, Field::Unsigned(65536)), DecodeError::FilterCount),
            (with(0, Field::Unsigned(2)), DecodeError::Read("truncated")),
            (with(4, Field::Unsigned(300)), DecodeError::BucketSize),
            (with(5, Field::Unsigned(0)), DecodeError::Iterations),
            (with(6, Field::Unsigned(3)), DecodeError::CuckooExpansion),
            (with(7, Field::Unsigned(0)), DecodeError::Buckets),
            (with(7, Field::Unsigned(8)), DecodeError::Buckets),
            (with(8, Field::Bytes(vec![0; 7])), DecodeError::SlotArray),
            (with(8, Field::Bytes(vec![0; 9])), DecodeError::LongPiece),
            (good()[..8].to_vec(), DecodeError::Read("truncated")),
        ];
        for (fields, expected) in cases {
            let got = decode(&mut FieldSlice(&fields), 4);
            assert_eq!(got.err(), Some(expected), "{fields:?}");
        }
        // Expansion 0 with two sub-filters: RedisBloom's SIGFPE.
        let mut two = with(6, Field::Unsigned(0));
        two[0] = Field::Unsigned(2);
        two.extend([Field::Unsigned(4), Field::Bytes(vec![0; 8])]);
        assert_eq!(
            decode(&mut FieldSlice(&two), 4).err(),
            Some(DecodeError::CuckooExpansion)
        );
        assert_eq!(
            decode(&mut FieldSlice(&good()), 5).err(),
            Some(DecodeError::UnknownEncoding)
        );
    }
}
