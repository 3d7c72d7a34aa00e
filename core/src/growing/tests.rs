//! The growing filter against its promises: no false negatives, the rate held at every
//! doubling of its items, memory near a reserved filter's, both serialised forms round trip
//! and refuse what they cannot be.

use crate::codec::{DecodeError, Field, FieldSlice};
use crate::growing::design::PER_CHUNK;
use crate::growing::{rdb, Growing};
use crate::spec::{FilterSpec, Growth, Window};
use crate::{rdb as envelope, scandump as stream, Chain, Filter};

fn url(i: u64) -> Vec<u8> {
    format!("https://host{}.example.com/page/{i}", i % 977).into_bytes()
}

fn absent(i: u64) -> Vec<u8> {
    format!("https://elsewhere.example.org/{i}").into_bytes()
}

fn false_positives(g: &Growing, samples: u64) -> f64 {
    let hits = (0..samples).filter(|&i| g.contains(&absent(i))).count();
    hits as f64 / samples as f64
}

fn grown(error: f64, items: u64, seed: u64) -> Growing {
    let mut g = Growing::new(error, 100, seed, u64::MAX).unwrap();
    for i in 0..items {
        g.add(&url(i), u64::MAX).unwrap();
    }
    g
}

#[test]
fn the_rate_holds_at_every_doubling_and_nothing_added_is_missed() {
    for (error, seed) in [(0.01, 7), (0.001, 8)] {
        let mut g = Growing::new(error, 100, seed, u64::MAX).unwrap();
        let mut added = 0u64;
        let mut checkpoint = 100u64;
        while checkpoint <= 3_200_000 {
            while added < checkpoint {
                g.add(&url(added), u64::MAX).unwrap();
                added += 1;
            }
            let stride = (added / 20_000).max(1);
            assert!(
                (0..added)
                    .step_by(stride as usize)
                    .all(|i| g.contains(&url(i))),
                "a false negative at {added}"
            );
            let fp = false_positives(&g, 100_000);
            eprintln!("{error} {added}: {fp}");
            assert!(fp <= error, "{fp} over {error} at {added} items");
            checkpoint *= 2;
        }
        assert!((0..added).all(|i| g.contains(&url(i))));
    }
}

#[test]
fn memory_stays_within_half_again_a_reserved_filter() {
    for error in [0.01, 0.001] {
        let items = 2_000_000;
        let g = grown(error, items, 3);
        let spec = FilterSpec {
            error,
            capacity: items,
            growth: Growth::Scaling(2),
            window: Window::Unbounded,
            refresh: true,
        };
        let reserved = Chain::new(&spec, 3, u64::MAX).unwrap().heap_bytes();
        let ratio = g.heap_bytes() as f64 / reserved as f64;
        let bits = g.heap_bytes() as f64 * 8.0 / items as f64;
        eprintln!("{error}: {bits:.2} bits per item, {ratio:.3} of a reserved filter");
        assert!(ratio <= 1.5, "{error}: {ratio}");
    }
}

/// A 100-item filter's key (MEMORY USAGE) is 480 bytes, 1.50 × a reserved filter's 320, with
/// the struct in the allocator's 80-byte class; at 88 bytes (levels and widths as u32) it took
/// the 96 class and the key 496 bytes, 1.55 ×.
#[test]
fn the_struct_fits_the_allocators_80_byte_class() {
    assert!(std::mem::size_of::<Growing>() <= 80);
}

#[test]
fn a_split_happens_every_per_chunk_adds_and_is_bounded() {
    let g = grown(0.01, 100_000, 1);
    // Adds a false positive answered Present took no entry and counted no item.
    assert!(g.items() > 99_000);
    assert_eq!(g.chunk_count(), g.items().div_ceil(PER_CHUNK));
    let most = g.chunks().map(|c| c.entries()).max().unwrap();
    assert!(most < 4 * PER_CHUNK as usize, "{most}");
    let entries: usize = g.chunks().map(|c| c.entries()).sum();
    assert!(entries >= 100_000 - 1_000, "{entries}");
}

#[test]
fn an_item_added_twice_is_present_the_second_time() {
    let mut g = Growing::new(0.01, 100, 5, u64::MAX).unwrap();
    assert_eq!(g.add(b"x", u64::MAX), Ok(crate::AddOutcome::Added));
    assert_eq!(g.add(b"x", u64::MAX), Ok(crate::AddOutcome::Present));
    assert_eq!(g.items(), 1);
}

#[test]
fn batches_answer_as_single_items_do() {
    let mut one = Growing::new(0.01, 100, 9, u64::MAX).unwrap();
    let mut batch = one.clone();
    // Each item twice in a row (so within one block of the batch, a split between them at
    // times), and again 6,000 items later.
    let items: Vec<Vec<u8>> = (0..8_000).map(|i| url(i / 2 % 3_000)).collect();
    let singles: Vec<_> = items.iter().map(|i| one.add(i, u64::MAX)).collect();
    let mut batched = Vec::new();
    batch.add_many(items.iter().map(|i| i.as_slice()), u64::MAX, |o| {
        batched.push(o);
        true
    });
    assert_eq!(singles, batched);
    assert_eq!(one, batch);
    let probes: Vec<Vec<u8>> = (0..4_000).map(|i| url(i * 2)).collect();
    let mut answers = Vec::new();
    one.contains_many(probes.iter().map(|p| p.as_slice()), |a| answers.push(a));
    let expected: Vec<bool> = probes.iter().map(|p| one.contains(p)).collect();
    assert_eq!(answers, expected);
}

#[test]
fn the_limit_refuses_an_add_and_changes_nothing() {
    let mut g = grown(0.01, 10_000, 2);
    let before = g.clone();
    let limit = g.heap_bytes();
    assert!(matches!(
        g.add(b"one more", limit),
        Err(crate::FilterError::TooLarge { .. })
    ));
    assert_eq!(g, before);
    assert!(Growing::new(0.01, 1 << 40, 1, 1 << 20).is_err());
    assert!(Growing::new(1e-12, 100, 1, u64::MAX).is_err());
}

#[test]
fn the_rdb_value_round_trips_and_truncations_are_refused() {
    let g = Filter::from(grown(0.01, 30_000, 4));
    let mut fields: Vec<Field> = Vec::new();
    envelope::encode(&g, &mut fields);
    assert_eq!(envelope::decode(&mut FieldSlice(&fields)), Ok(g.clone()));
    for cut in 0..fields.len() {
        assert!(envelope::decode(&mut FieldSlice(&fields[..cut])).is_err());
    }
    let empty = Filter::from(Growing::new(0.001, 5_000, 6, u64::MAX).unwrap());
    let mut fields: Vec<Field> = Vec::new();
    envelope::encode(&empty, &mut fields);
    assert_eq!(envelope::decode(&mut FieldSlice(&fields)), Ok(empty));
}

#[test]
fn hostile_values_name_the_check_that_fired() {
    let g = grown(0.01, 5_000, 4);
    let mut fields: Vec<Field> = Vec::new();
    rdb::encode(&g, &mut fields);
    let decode = |fields: &[Field]| rdb::decode(&mut FieldSlice(fields), g.items()).err();
    // seed, error, capacity, cell bits, slot bits, start level, level, split, pieces, piece.
    let with = |i: usize, f: Field| {
        let mut copy = fields.clone();
        copy[i] = f;
        decode(&copy)
    };
    let bad = Some(DecodeError::GrowingParameters);
    assert_eq!(with(1, Field::Double(0.0)), bad);
    assert_eq!(with(2, Field::Unsigned(0)), bad);
    assert_eq!(with(3, Field::Unsigned(0)), bad);
    assert_eq!(with(4, Field::Unsigned(33)), bad);
    assert_eq!(with(6, Field::Unsigned(3)), bad);
    assert_eq!(with(7, Field::Unsigned(1 << 40)), bad);
    let Field::Bytes(piece) = &fields[9] else {
        panic!("a piece")
    };
    let mut flipped = piece.clone();
    flipped[5] ^= 0x10;
    assert_eq!(
        with(9, Field::Bytes(flipped)),
        Some(DecodeError::GrowingChunk)
    );
    assert_eq!(
        with(9, Field::Bytes(piece[..piece.len() - 3].to_vec())),
        Some(DecodeError::GrowingChunk)
    );
    assert_eq!(
        rdb::decode(&mut FieldSlice(&fields), g.items() + 10_000).err(),
        bad
    );
}

#[test]
fn scandump_moves_a_filter_whole_and_refuses_misplaced_steps() {
    let f = Filter::from(grown(0.01, 50_000, 11));
    let header = stream::header(&f);
    let mut copy = stream::filter_from_header(&header, 0, u64::MAX).unwrap();
    let steps: Vec<_> = stream::chunks(&f).collect();
    for (next, data) in &steps {
        stream::load_chunk(&mut copy, *next, data).unwrap();
    }
    assert_eq!(copy, f);
    for cut in 0..header.len() {
        assert!(stream::filter_from_header(&header[..cut], 0, u64::MAX).is_err());
    }
    let (next, data) = &steps[0];
    assert!(stream::load_chunk(&mut copy, next + 1_000_000, data).is_err());
    assert!(stream::load_chunk(&mut copy, 0, data).is_err());
    assert!(stream::load_chunk(&mut copy, *next, &data[..data.len() - 1]).is_err());
    assert_eq!(copy, f);
}
