//! "No input crashes the server": hostile arguments to every BF command (`arguments.rs`),
//! fuzzed LOADCHUNK headers and chunks (`chunks.rs`), corrupted DUMP payloads and RDB files
//! (`dumps.rs`), and the memory limits (`limits.rs`). This file: the helpers they share.
//!
//! Every hostile reply is compared with the exact expected reply (the spec's error text, or the
//! correct answer); after each one the server must still answer PING and two sentinels (a filter
//! and a string) must be untouched. The expected replies were checked against RedisBloom 2.8.2
//! (the module `scripts/redisbloom-so` fetches); the few places where rsbloom deliberately
//! differs say so next to the case.

#[path = "../common/mod.rs"]
mod common;

mod arguments;
mod chunks;
mod dumps;
mod limits;

use common::*;

// ---------------------------------------------------------------------------------------------
// helpers

/// splitmix64: a small seeded generator, so every fuzz run sends the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn cmd(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

const SENTINEL: &str = "sentinel:bf";
const SENTINEL_STR: &str = "sentinel:str";
const SENTINEL_VALUE: &[u8] = b"sentinel value \x00\xff";
const SENTINEL_ITEMS: [&str; 4] = ["alpha", "beta", "", "\u{0}gamma"];

fn setup_sentinels(con: &mut redis::Connection) {
    assert_eq!(
        run(con, &["BF.RESERVE", SENTINEL, "0.001", "1000"]),
        ok(),
        "sentinel"
    );
    let mut madd: Vec<&[u8]> = vec![b"BF.MADD", SENTINEL.as_bytes()];
    madd.extend(SENTINEL_ITEMS.iter().map(|s| s.as_bytes()));
    assert_eq!(run(con, &madd), ints(&[1, 1, 1, 1]));
    assert_eq!(
        run(con, &[&b"SET"[..], SENTINEL_STR.as_bytes(), SENTINEL_VALUE]),
        ok()
    );
}

/// The commands that check the server and the sentinels, appended to every hostile command.
fn sentinel_checks() -> Vec<Vec<Vec<u8>>> {
    let mut mexists = vec![b("BF.MEXISTS"), b(SENTINEL)];
    mexists.extend(SENTINEL_ITEMS.iter().map(|s| b(s)));
    vec![
        vec![b("PING")],
        mexists,
        vec![b("BF.CARD"), b(SENTINEL)],
        vec![b("GET"), b(SENTINEL_STR)],
    ]
}

fn assert_sentinels(replies: &[Reply], context: &str) {
    assert_eq!(
        replies[0],
        Reply::Status("PONG".into()),
        "PING after {context}"
    );
    assert_eq!(
        replies[1],
        ints(&[1, 1, 1, 1]),
        "sentinel items after {context}"
    );
    assert_eq!(replies[2], int(4), "sentinel card after {context}");
    assert_eq!(
        replies[3],
        Reply::Bulk(SENTINEL_VALUE.to_vec()),
        "sentinel string after {context}"
    );
}

fn show(args: &[Vec<u8>]) -> String {
    let parts: Vec<String> = args
        .iter()
        .map(|a| {
            if a.len() > 64 {
                format!("<{} bytes>", a.len())
            } else {
                format!("{:?}", String::from_utf8_lossy(a))
            }
        })
        .collect();
    parts.join(" ")
}

/// BF.INFO as (name, value) pairs.
fn info(con: &mut redis::Connection, key: &str) -> Vec<(String, Reply)> {
    match run(con, &["BF.INFO", key]) {
        Reply::Arr(v) => v
            .chunks(2)
            .map(|p| match &p[0] {
                Reply::Status(s) => (s.clone(), p[1].clone()),
                other => panic!("BF.INFO field name {other:?}"),
            })
            .collect(),
        other => panic!("BF.INFO {key}: {other:?}"),
    }
}

fn info_int(fields: &[(String, Reply)], name: &str) -> i64 {
    match fields.iter().find(|(n, _)| n == name) {
        Some((_, Reply::Int(i))) => *i,
        other => panic!("BF.INFO {name}: {other:?}"),
    }
}

/// Asserts that the filter at `key` is self-consistent (BF.INFO, BF.DEBUG and BF.CARD agree,
/// capacities > 0, at least one link) and still works (an add is then found).
fn assert_consistent(con: &mut redis::Connection, key: &str, context: &str) {
    let fields = info(con, key);
    let capacity = info_int(&fields, "Capacity");
    let filters = info_int(&fields, "Number of filters");
    let items = info_int(&fields, "Number of items inserted");
    assert!(capacity > 0, "{context}: capacity {capacity}");
    assert!(filters >= 1, "{context}: {filters} filters");
    assert!(info_int(&fields, "Size") > 0, "{context}: size");
    assert_eq!(run(con, &["BF.CARD", key]), int(items), "{context}: card");
    let debug = match run(con, &["BF.DEBUG", key]) {
        Reply::Arr(v) => v,
        other => panic!("{context}: BF.DEBUG {other:?}"),
    };
    assert_eq!(debug.len() as i64, filters + 1, "{context}: debug lines");
    assert_eq!(debug[0], bulk(&format!("size:{items}")), "{context}: debug");
    let mut sum = 0u64;
    for line in &debug[1..] {
        let Reply::Bulk(line) = line else {
            panic!("{context}: debug line {line:?}")
        };
        let line = String::from_utf8_lossy(line);
        let field = |name: &str| line.split(' ').find_map(|w| w.strip_prefix(name));
        if line.starts_with("layout:expandable") {
            // A growing filter: its capacity is what its lines hold at their mean load (the
            // one-line layout), or its chunks before the next split (the chunk layout).
            let number = |name: &str| -> u64 { field(name).and_then(|c| c.parse().ok()).unwrap() };
            let held = if field("format:") == Some("lines") {
                number("lines:") * number("load:")
            } else {
                192 * number("chunks:")
            };
            sum = sum.saturating_add(held);
            continue;
        }
        // a u64: a LOADCHUNK header may claim any link capacity (BF.INFO saturates at i64::MAX)
        let cap: u64 = line
            .split(' ')
            .find_map(|w| w.strip_prefix("capacity:"))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("{context}: debug line {line}"));
        assert!(cap > 0, "{context}: link capacity in {line}");
        sum = sum.saturating_add(cap);
    }
    assert_eq!(
        i64::try_from(sum).unwrap_or(i64::MAX),
        capacity,
        "{context}: link capacities add up"
    );
    let probe = format!("probe-{context}");
    match run(con, &["BF.ADD", key, &probe]) {
        Reply::Int(0 | 1) => {
            assert_eq!(run(con, &["BF.EXISTS", key, &probe]), int(1), "{context}")
        }
        // a full NONSCALING chain, or one that may not grow, may refuse the add
        Reply::Err(e) => assert!(
            e == texts::FULL
                || e.starts_with("ERR filter would need")
                || e.starts_with("ERR cannot add a link"),
            "{context}: BF.ADD {e}"
        ),
        other => panic!("{context}: BF.ADD {other:?}"),
    }
}

/// The SCANDUMP stream of `key`: the header, then (iterator, chunk) pairs, each with the
/// iterator SCANDUMP returned alongside it, which is the one LOADCHUNK takes.
fn scandump(con: &mut redis::Connection, key: &str) -> (Vec<u8>, Vec<(i64, Vec<u8>)>) {
    let mut it = 0i64;
    let mut header = None;
    let mut chunks = Vec::new();
    loop {
        let r = run(con, &["BF.SCANDUMP", key, &it.to_string()]);
        let Reply::Arr(v) = r else {
            panic!("SCANDUMP {r:?}")
        };
        let (Reply::Int(next), Reply::Bulk(data)) = (&v[0], &v[1]) else {
            panic!("SCANDUMP {v:?}")
        };
        if *next == 0 {
            break;
        }
        if it == 0 {
            header = Some(data.clone());
        } else {
            chunks.push((*next, data.clone()));
        }
        it = *next;
    }
    (header.expect("a header"), chunks)
}
