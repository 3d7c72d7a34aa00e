//! Oracle tests against data valkey-bloom wrote (`tests/fixtures/valkey-bloom/`): every key of
//! its AOF rewrite (`BF.LOAD` blobs) answers every recorded query as valkey-bloom did, saves
//! back to the same blob, and its replayed creation and adds rebuild it bit for bit.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::bloom::args::insert;
use crate::codec::{Field, FieldSlice};
use crate::outcome::AddOutcome;
use crate::spec::{FilterSpec, Growth, Window};
use crate::valkey::filter::FIXED_SEED;
use crate::valkey::{load, rdb, ValkeyBloom, ValkeySpec};
use crate::{scandump as stream, Filter};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/valkey-bloom")
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The commands of an AOF file (RESP arrays of bulk strings).
fn commands(path: &str) -> Vec<Vec<Vec<u8>>> {
    let data = std::fs::read(fixtures().join(path)).unwrap();
    let mut at = 0;
    let line = |at: &mut usize| {
        let end = *at + data[*at..].windows(2).position(|w| w == b"\r\n").unwrap();
        let text = std::str::from_utf8(&data[*at + 1..end])
            .unwrap()
            .to_string();
        *at = end + 2;
        text.parse::<usize>().unwrap()
    };
    let mut out = Vec::new();
    while at < data.len() {
        assert_eq!(data[at], b'*');
        let n = line(&mut at);
        let mut argv = Vec::with_capacity(n);
        for _ in 0..n {
            assert_eq!(data[at], b'$');
            let len = line(&mut at);
            argv.push(data[at..at + len].to_vec());
            at += len + 2;
        }
        out.push(argv);
    }
    out
}

/// The `BF.LOAD` blob of every key in an AOF rewrite.
fn blobs(path: &str) -> HashMap<String, Vec<u8>> {
    commands(path)
        .into_iter()
        .filter(|argv| argv[0] == b"BF.LOAD")
        .map(|argv| (String::from_utf8(argv[1].clone()).unwrap(), argv[2].clone()))
        .collect()
}

fn item_bytes(key: &serde_json::Value, item: &serde_json::Value) -> Vec<u8> {
    let text = item.as_str().unwrap();
    if key["items_encoding"] == "hex" {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    } else {
        text.as_bytes().to_vec()
    }
}

/// Asserts that `v` answers every recorded query of `key` as valkey-bloom did.
fn answers_as_recorded(name: &str, key: &serde_json::Value, v: &ValkeyBloom) {
    for item in key["items"].as_array().unwrap() {
        assert!(v.contains(&item_bytes(key, item)), "{name}: {item} absent");
    }
    let hits: Vec<u64> = (0..10_000u64)
        .filter(|i| v.contains(format!("never:{name}:{i}").as_bytes()))
        .collect();
    let recorded: Vec<u64> = key["never_added"]["positive_indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap())
        .collect();
    assert_eq!(hits, recorded, "{name}: never-added items that answer 1");
    assert_eq!(
        v.items(),
        key["bf_card"].as_u64().unwrap(),
        "{name}: BF.CARD"
    );
    let info = &key["bf_info_fields"];
    assert_eq!(v.capacity(), info["CAPACITY"].as_u64().unwrap(), "{name}");
    assert_eq!(
        v.filters().len() as u64,
        info["FILTERS"].as_u64().unwrap(),
        "{name}"
    );
    let expansion = (v.expansion() != 0).then_some(u64::from(v.expansion()));
    assert_eq!(expansion, info["EXPANSION"].as_u64(), "{name}");
}

#[test]
fn every_key_of_both_aof_rewrites_answers_as_valkey_bloom_did_and_saves_the_same_blob() {
    let expected = expected();
    let keys = expected["keys"].as_object().unwrap();
    for dir in [
        "aof-rewrite-8.1.1/appendonly.aof.2.base.aof",
        "aof-rewrite-9.1.2/appendonly.aof.1.base.aof",
    ] {
        let blobs = blobs(dir);
        assert_eq!(blobs.len(), keys.len(), "{dir}: one BF.LOAD per key");
        for (name, key) in keys {
            let v = load::decode(&blobs[name]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            answers_as_recorded(name, key, &v);
            assert_eq!(load::encode(&v), blobs[name], "{name}: the blob saved back");
            let decoded = &key["decoded_structure"];
            for (f, d) in v
                .filters()
                .iter()
                .zip(decoded["filters"].as_array().unwrap())
            {
                assert_eq!(u64::from(f.hashes()), d["k"].as_u64().unwrap(), "{name}");
                assert_eq!(
                    f.bits().len() as u64,
                    d["bitmap_bytes"].as_u64().unwrap(),
                    "{name}"
                );
            }
            assert_eq!(
                v.seed_is_random(),
                decoded["is_seed_random"].as_bool().unwrap()
            );
        }
    }
}

#[test]
fn replaying_the_command_stream_rebuilds_every_key_bit_for_bit() {
    let expected = expected();
    let keys = expected["keys"].as_object().unwrap();
    let saved = blobs("aof-rewrite-8.1.1/appendonly.aof.2.base.aof");
    let defaults = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
        refresh: true,
    };
    let mut made: HashMap<String, ValkeyBloom> = HashMap::new();
    let mut replies: HashMap<String, Vec<bool>> = HashMap::new();
    for argv in commands("aof-incremental-8.1.1/appendonly.aof.1.incr.aof") {
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let name = String::from_utf8(argv.get(1).cloned().unwrap_or_default()).unwrap();
        let first = match args[0] {
            b"SELECT" => continue,
            b"BF.INSERT" => {
                let i = insert(&args, defaults, true).unwrap();
                assert!(
                    insert(&args, defaults, false).is_err(),
                    "a client's TIGHTENING/SEED"
                );
                let valkey = i.valkey.expect("valkey-bloom's creation form");
                let spec = ValkeySpec::of_insert(
                    &i.create.unwrap(),
                    valkey.tightening,
                    valkey.seed.unwrap(),
                );
                made.entry(name.clone())
                    .or_insert_with(|| ValkeyBloom::new(&spec, u64::MAX).unwrap());
                i.first_item
            }
            b"BF.ADD" | b"BF.MADD" => 2,
            other => panic!("unexpected {}", String::from_utf8_lossy(other)),
        };
        let v = made.get_mut(&name).expect("created first");
        for item in &args[first..] {
            let added = v.add(item, u64::MAX).unwrap() == AddOutcome::Added;
            replies.entry(name.clone()).or_default().push(added);
        }
    }
    assert_eq!(made.len(), keys.len());
    for (name, key) in keys {
        let v = &made[name];
        answers_as_recorded(name, key, v);
        assert_eq!(
            load::encode(v),
            saved[name],
            "{name}: the replayed key is the saved one"
        );
        let recorded: Vec<bool> = key["add_results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r.as_i64().map(|r| r == 1))
            .collect();
        let ours = replies.remove(name).unwrap_or_default();
        // An add valkey-bloom answered 0 replicates only in a BF.MADD with a new item.
        assert_eq!(
            ours.iter().filter(|&&a| a).count(),
            recorded.iter().filter(|&&a| a).count(),
            "{name}"
        );
    }
}

#[test]
fn a_fixed_seed_filter_is_created_as_valkey_bloom_creates_it() {
    // bf:fixedseed: `BF.RESERVE bf:fixedseed 0.01 100` with the fixed seed, 250 items.
    let expected = expected();
    let key = &expected["keys"]["bf:fixedseed"];
    let spec = ValkeySpec {
        capacity: 100,
        error: 0.01,
        tightening: 0.5,
        expansion: 2,
        seed: FIXED_SEED,
    };
    let mut v = ValkeyBloom::new(&spec, u64::MAX).unwrap();
    assert!(!v.seed_is_random());
    for item in key["items"].as_array().unwrap() {
        v.add(&item_bytes(key, item), u64::MAX).unwrap();
    }
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    assert_eq!(load::encode(&v), saved["bf:fixedseed"]);
}

#[test]
fn the_rdb_value_round_trips_and_truncations_are_refused() {
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    for (name, blob) in &saved {
        let v = load::decode(blob).unwrap();
        let mut fields: Vec<Field> = Vec::new();
        rdb::encode(&v, &mut fields);
        assert_eq!(
            rdb::decode(&mut FieldSlice(&fields), 1).as_ref(),
            Ok(&v),
            "{name}"
        );
        assert!(rdb::decode(&mut FieldSlice(&fields), 2).is_err());
        for cut in 0..fields.len() {
            assert!(
                rdb::decode(&mut FieldSlice(&fields[..cut]), 1).is_err(),
                "{name} cut {cut}"
            );
        }
        for cut in 0..blob.len().min(200) {
            assert!(load::decode(&blob[..cut]).is_err(), "{name} blob cut {cut}");
        }
    }
}

#[test]
fn hostile_values_name_the_check_that_fired() {
    use crate::codec::DecodeError;
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    let v = load::decode(&saved["bf:scaling"]).unwrap();
    let mut fields: Vec<Field> = Vec::new();
    rdb::encode(&v, &mut fields);
    let refused = |at: usize, field: Field, want: DecodeError| {
        let mut f = fields.clone();
        f[at] = field;
        assert_eq!(rdb::decode(&mut FieldSlice(&f), 1), Err(want), "field {at}");
    };
    refused(0, Field::Unsigned(0), DecodeError::FilterCount);
    refused(1, Field::Unsigned(1 << 32), DecodeError::Expansion);
    refused(2, Field::Double(1.0), DecodeError::ErrorRate);
    refused(3, Field::Double(0.0), DecodeError::ErrorRate);
    refused(4, Field::Unsigned(2), DecodeError::Seed);
    refused(6, Field::Unsigned(0), DecodeError::Capacity);
    let raw = |edit: &dyn Fn(&mut Vec<u8>)| {
        let Field::Bytes(mut b) = fields[5].clone() else {
            panic!()
        };
        edit(&mut b);
        Field::Bytes(b)
    };
    refused(5, raw(&|b| b[0] = 2), DecodeError::BitmapHeader);
    refused(5, raw(&|b| b.truncate(44)), DecodeError::BitmapHeader);
    refused(5, raw(&|b| b.truncate(100)), DecodeError::BitCount);
    refused(5, raw(&|b| b.truncate(45)), DecodeError::BitCount);
    refused(
        5,
        raw(&|b| b[9..13].copy_from_slice(&0u32.to_le_bytes())),
        DecodeError::HashCount,
    );
    refused(
        5,
        raw(&|b| b[9..13].copy_from_slice(&5000u32.to_le_bytes())),
        DecodeError::HashCount,
    );
    // The seed flag says fixed, the seed is random: valkey-bloom refuses it too.
    refused(4, Field::Unsigned(0), DecodeError::Seed);
    // A last item count past i64 (valkey-bloom's type).
    let last = fields.len() - 1;
    refused(last, Field::Unsigned(1 << 63), DecodeError::ItemSum);
    // An earlier sub-filter's capacity that the RDB value (which counts it as its items) could
    // not hold: BF.LOAD refuses it rather than take a key that could not be loaded back (the
    // fuzzer's find). The first capacity is at 1 + 4 + 8 + 8 + 1 + 8, then length, bits, items.
    let mut blob = saved["bf:scaling"].clone();
    let at = 30 + 8 + 165 + 8;
    blob[at..at + 8].copy_from_slice(&(i64::MAX as u64).to_le_bytes());
    assert_eq!(
        load::decode(&blob),
        Err(load::LoadError::Invalid(DecodeError::ItemSum))
    );
    let mut blob = saved["bf:scaling"].clone();
    blob.push(0);
    assert_eq!(
        load::decode(&blob),
        Err(load::LoadError::Invalid(DecodeError::TrailingBytes))
    );
    blob[0] = 2;
    assert_eq!(load::decode(&blob), Err(load::LoadError::Version));
}

#[test]
fn scandump_moves_a_filter_whole() {
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    for (name, blob) in &saved {
        let f = Filter::from(load::decode(blob).unwrap());
        let header = stream::header(&f);
        let mut copy = stream::filter_from_header(&header, 0, u64::MAX).unwrap();
        for (next, data) in stream::chunks(&f) {
            stream::load_chunk(&mut copy, next, &data).unwrap();
        }
        assert_eq!(copy, f, "{name}");
        for cut in 0..header.len() {
            assert!(stream::filter_from_header(&header[..cut], 0, u64::MAX).is_err());
        }
        assert!(matches!(
            stream::filter_from_header(&header, 0, 10),
            Err(stream::DumpError::TooLarge { .. })
        ));
    }
    assert_eq!(crate::scandump::options::VALKEY_OPTIONS, 0x1100);
}

#[test]
fn growth_keeps_the_rate_after_doubling_a_loaded_key() {
    // bf:big holds 5,000 of its 50,000; fill it to 100,000 (doubling past its capacity), then
    // count false positives among 200,000 never-added items: the rate asked for is 0.001, and
    // the tightening keeps the sum of the sub-filters' rates under 0.001 × (1 + 0.5).
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    let mut v = load::decode(&saved["bf:big"]).unwrap();
    for i in 0..95_000u32 {
        v.add(format!("grow:{i}").as_bytes(), u64::MAX).unwrap();
    }
    assert_eq!(v.filters().len(), 2);
    let trials = 200_000;
    let hits = (0..trials)
        .filter(|i| v.contains(format!("absent:{i}").as_bytes()))
        .count();
    let rate = hits as f64 / trials as f64;
    println!(
        "bf:big doubled to {} items: {hits} of {trials} never-added items present ({rate})",
        v.items()
    );
    assert!(rate < 0.0015, "rate {rate} after doubling");
}

#[test]
fn batches_answer_and_add_as_single_items_do() {
    let saved = blobs("aof-rewrite-9.1.2/appendonly.aof.1.base.aof");
    let v = load::decode(&saved["bf:scaling"]).unwrap();
    let items: Vec<Vec<u8>> = (0..3_000)
        .map(|i| format!("batch:{i}").into_bytes())
        .collect();
    let mut batch = Vec::new();
    v.contains_many(items.iter().map(Vec::as_slice), |p| batch.push(p));
    let single: Vec<bool> = items.iter().map(|i| v.contains(i)).collect();
    assert_eq!(batch, single);
    // Adds across growth (bf:scaling's last sub-filter has room for 512 of them).
    let (mut a, mut b) = (v.clone(), v);
    let mut batch = Vec::new();
    a.add_many(items.iter().map(Vec::as_slice), u64::MAX, |r| {
        batch.push(r);
        true
    });
    let single: Vec<_> = items.iter().map(|i| b.add(i, u64::MAX)).collect();
    assert_eq!(batch, single);
    assert_eq!(a, b);
    assert_eq!(a.filters().len(), 6, "grew twice within the batch");
}
