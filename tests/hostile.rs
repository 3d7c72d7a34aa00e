//! "No input crashes the server": hostile arguments to every BF command, fuzzed LOADCHUNK
//! headers and chunks, corrupted DUMP payloads and RDB files, and the memory limits.
//!
//! Every hostile reply is compared with the exact expected reply (the spec's error text, or the
//! correct answer); after each one the server must still answer PING and two sentinels (a filter
//! and a string) must be untouched. The expected replies were checked against RedisBloom 2.8.2
//! (the module `scripts/redisbloom-so` fetches); the few places where rsbloom deliberately
//! differs say so next to the case.

mod common;

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

// ---------------------------------------------------------------------------------------------
// 1. hostile arguments

/// How a text parses as an integer (Redis's `string2ll`, which RedisBloom uses).
#[derive(Clone, Copy, PartialEq, Debug)]
enum I {
    Bad,
    NonPositive,
    Positive,
}

/// How a text parses as a double (Redis's `string2d`), and whether it is a valid error rate.
#[derive(Clone, Copy, PartialEq, Debug)]
enum D {
    Bad,
    OutOfRange,
    InRange,
}

/// Hostile numbers, each with how it must parse. Hand-labelled (checked against RedisBloom
/// 2.8.2, which parses with Redis's string2ll / string2d).
const NUMBERS: &[(&[u8], I, D)] = &[
    (b"NaN", I::Bad, D::Bad),
    (b"nan", I::Bad, D::Bad),
    (b"-nan", I::Bad, D::Bad),
    (b"inf", I::Bad, D::OutOfRange),
    (b"-inf", I::Bad, D::OutOfRange),
    (b"+inf", I::Bad, D::OutOfRange),
    (b"Infinity", I::Bad, D::OutOfRange),
    (b"-5", I::NonPositive, D::OutOfRange),
    (b"0", I::NonPositive, D::OutOfRange),
    (b"-0", I::Bad, D::OutOfRange), // string2ll refuses "-0"
    (b"1.5", I::Bad, D::OutOfRange),
    (b"0.5", I::Bad, D::InRange),
    (b"1e-3", I::Bad, D::InRange),
    (b".5", I::Bad, D::InRange),
    (b"1", I::Positive, D::OutOfRange),
    (b"3", I::Positive, D::OutOfRange),
    (b"18446744073709551616", I::Bad, D::OutOfRange),
    (b"99999999999999999999999", I::Bad, D::OutOfRange),
    (b"-9223372036854775809", I::Bad, D::OutOfRange),
    (b"-9223372036854775808", I::NonPositive, D::OutOfRange),
    (b" 100", I::Bad, D::Bad),
    (b"100x", I::Bad, D::Bad),
    (b"100 ", I::Bad, D::Bad),
    (b"\t0.5", I::Bad, D::Bad),
    (b"1e3", I::Bad, D::OutOfRange),
    (b"", I::Bad, D::Bad),
    (b"+100", I::Bad, D::OutOfRange), // string2ll refuses a '+'
    (b"0100", I::Bad, D::OutOfRange), // string2ll refuses leading zeros
    (b"00", I::Bad, D::OutOfRange),
    (b"1e400", I::Bad, D::Bad),  // strtod ERANGE (overflow)
    (b"1e-400", I::Bad, D::Bad), // strtod ERANGE (underflow to 0)
    // rsbloom: C's hexadecimal floats are not numbers (RedisBloom's strtod reads 0x10 as 16
    // and answers the range error instead).
    (b"0x10", I::Bad, D::Bad),
    (b"\x00", I::Bad, D::Bad),
    (b"5\x00", I::Bad, D::Bad),
    (b"0.5\x00", I::Bad, D::Bad),
    (b"\xff\xfe", I::Bad, D::Bad),
    (b"--1", I::Bad, D::Bad),
    (b"1,5", I::Bad, D::Bad),
];

/// Items beyond the numbers: empty, NUL bytes, 0xff bytes, option names, 1 MB.
fn hostile_items() -> Vec<Vec<u8>> {
    let mut items: Vec<Vec<u8>> = NUMBERS.iter().map(|(v, _, _)| v.to_vec()).collect();
    items.extend([
        b"\x00\x00\x00\x00".to_vec(),
        vec![0xff; 16],
        (0..=255u8).collect(),
        b"ITEMS".to_vec(),
        b"NOCREATE".to_vec(),
        b"nonscaling".to_vec(),
        b"\r\n*1\r\n$4\r\nPING\r\n".to_vec(),
        vec![0u8; 1 << 20],
        Rng(99).bytes(1 << 20),
        vec![0xff; (1 << 20) + 1],
    ]);
    items
}

enum Expect {
    Is(Reply),
    /// Any reply `check` accepts (described by the text).
    Check(&'static str, fn(&Reply) -> bool),
}

struct Cases {
    list: Vec<(Vec<Vec<u8>>, Expect)>,
    keys: usize,
}

impl Cases {
    fn key(&mut self) -> String {
        self.keys += 1;
        format!("h:{}", self.keys)
    }
    fn push(&mut self, args: Vec<Vec<u8>>, reply: Reply) {
        self.list.push((args, Expect::Is(reply)));
    }
    fn check(&mut self, args: Vec<Vec<u8>>, what: &'static str, f: fn(&Reply) -> bool) {
        self.list.push((args, Expect::Check(what, f)));
    }
}

fn scandump_shape(r: &Reply) -> bool {
    matches!(r, Reply::Arr(v) if v.len() == 2 && matches!(v[0], Reply::Int(_)) && matches!(v[1], Reply::Bulk(_)))
}

/// Builds the whole table: command templates × hostile values, arity, option spelling and
/// order, wrong types, hostile items.
fn hostile_cases() -> Cases {
    let mut c = Cases {
        list: Vec::new(),
        keys: 0,
    };
    // Per command family, as the files of src/commands/ are.
    reserve_number_cases(&mut c);
    reserve_option_cases(&mut c);
    insert_number_cases(&mut c);
    insert_option_cases(&mut c);
    item_cases(&mut c);
    scandump_number_cases(&mut c);
    info_number_cases(&mut c);
    info_option_cases(&mut c);
    arity_cases(&mut c);
    wrongtype_cases(&mut c);
    c
}

/// BF.RESERVE with each hostile number in each numeric position.
fn reserve_number_cases(c: &mut Cases) {
    for &(v, i, d) in NUMBERS {
        let k = c.key();
        c.push(
            cmd(&[b"BF.RESERVE", k.as_bytes(), v, b"100"]),
            match d {
                D::Bad => err(texts::BAD_ERROR_RATE),
                D::OutOfRange => err(texts::ERROR_RATE_RANGE),
                D::InRange => ok(),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[b"BF.RESERVE", k.as_bytes(), b"0.01", v]),
            match i {
                I::Bad => err(texts::BAD_CAPACITY),
                I::NonPositive => err(texts::CAPACITY_RANGE),
                I::Positive => ok(),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                b"EXPANSION",
                v,
            ]),
            match i {
                I::Bad => err(texts::BAD_EXPANSION),
                I::NonPositive => err(texts::EXPANSION_RANGE),
                I::Positive => ok(),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[b"BF.RESERVE", k.as_bytes(), v, v, b"EXPANSION", v]),
            match (d, i) {
                (D::Bad, _) => err(texts::BAD_ERROR_RATE),
                (D::OutOfRange, _) => err(texts::ERROR_RATE_RANGE),
                (D::InRange, _) => err(texts::BAD_CAPACITY), // no InRange value is an integer
            },
        );
        // NONSCALING with EXPANSION is refused before the value is looked at
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                b"NONSCALING",
                b"EXPANSION",
                v,
            ]),
            err(texts::NONSCALING_EXPANSION),
        );
    }
}

/// BF.INSERT with each hostile number as each option's value, and where an option name is expected.
fn insert_number_cases(c: &mut Cases) {
    for &(v, i, d) in NUMBERS {
        let k = c.key();
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), b"CAPACITY", v, b"ITEMS", b"a"]),
            match i {
                I::Bad => err(texts::INSERT_BAD_CAPACITY),
                I::NonPositive => err(texts::INSERT_BAD_ARGUMENT),
                I::Positive => ints(&[1]),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), b"ERROR", v, b"ITEMS", b"a"]),
            match d {
                D::Bad => err(texts::INSERT_BAD_ERROR_RATE),
                D::OutOfRange => err(texts::INSERT_BAD_ARGUMENT),
                D::InRange => ints(&[1]),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), b"EXPANSION", v, b"ITEMS", b"a"]),
            match i {
                I::Bad => err(texts::INSERT_BAD_EXPANSION),
                I::NonPositive => err(texts::INSERT_BAD_ARGUMENT),
                I::Positive => ints(&[1]),
            },
        );
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.INSERT",
                k.as_bytes(),
                b"NOCREATE",
                b"CAPACITY",
                v,
                b"ITEMS",
                b"a",
            ]),
            match i {
                I::Bad => err(texts::INSERT_BAD_CAPACITY),
                I::NonPositive => err(texts::INSERT_BAD_ARGUMENT),
                I::Positive => err(texts::NOT_FOUND),
            },
        );
        // a value where an option name is expected
        let k = c.key();
        let expect = match v.first().map(u8::to_ascii_lowercase) {
            // RedisBloom would read "nan" as NONSCALING and "inf" as ITEMS (its first
            // letters): rsbloom names them; the others RedisBloom refuses too.
            Some(b'n' | b'i' | b'c' | b'e') => err(&format!(
                "ERR unknown argument '{}' for BF.INSERT",
                String::from_utf8_lossy(v)
            )),
            _ => err(texts::INSERT_UNKNOWN_ARGUMENT),
        };
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), v, b"ITEMS", b"a"]),
            expect,
        );
    }
}

/// BF.SCANDUMP and BF.LOADCHUNK with each hostile number as the iterator and as the data.
fn scandump_number_cases(c: &mut Cases) {
    for &(v, i, _) in NUMBERS {
        // iterators
        c.push(cmd(&[b"BF.SCANDUMP", b"missing", v]), err(texts::NOT_FOUND));
        if i == I::Bad {
            c.push(
                cmd(&[b"BF.SCANDUMP", SENTINEL.as_bytes(), v]),
                err(texts::SCANDUMP_BAD_ITERATOR),
            );
            c.push(
                cmd(&[b"BF.LOADCHUNK", b"sink", v, b"y"]),
                err(texts::LOADCHUNK_BAD_ITERATOR),
            );
            c.push(
                cmd(&[b"BF.LOADCHUNK", b"missing", v, b"y"]),
                err(texts::LOADCHUNK_BAD_ITERATOR),
            );
        } else {
            c.check(
                cmd(&[b"BF.SCANDUMP", SENTINEL.as_bytes(), v]),
                "[iterator, data]",
                scandump_shape,
            );
            let n: i64 = std::str::from_utf8(v).unwrap().parse().unwrap();
            c.push(
                cmd(&[b"BF.LOADCHUNK", b"sink", v, b"y"]),
                match n {
                    ..=0 => err(texts::BAD_DATA),
                    1 => err(texts::NO_LINK),
                    _ => ok(), // one byte into sink's bit array
                },
            );
            c.push(
                cmd(&[b"BF.LOADCHUNK", b"missing", v, b"y"]),
                if n == 1 {
                    err(texts::BAD_DATA)
                } else {
                    err(texts::NOT_FOUND)
                },
            );
        }
        c.push(
            cmd(&[b"BF.LOADCHUNK", b"missing", b"1", v]),
            err(texts::BAD_DATA),
        );
    }
}

/// BF.INFO with each hostile number as the field.
fn info_number_cases(c: &mut Cases) {
    for &(v, _, _) in NUMBERS {
        c.push(
            cmd(&[b"BF.INFO", SENTINEL.as_bytes(), v]),
            err(texts::INVALID_INFO_VALUE),
        );
        c.push(cmd(&[b"BF.INFO", b"missing", v]), err(texts::NOT_FOUND));
    }
}

/// Hostile items through BF.ADD, BF.MADD, BF.INSERT, BF.EXISTS and BF.MEXISTS.
fn item_cases(c: &mut Cases) {
    // --- hostile items: each is added (1: new), found (1), and a variant of it is not (0)
    for (n, item) in hostile_items().iter().enumerate() {
        let mut other = item.clone();
        other.push(b'~');
        c.push(cmd(&[b"BF.ADD", b"items:add", item]), int(1));
        c.push(cmd(&[b"BF.ADD", b"items:add", item]), int(0));
        c.push(cmd(&[b"BF.EXISTS", b"items:add", item]), int(1));
        c.push(cmd(&[b"BF.EXISTS", b"items:add", &other]), int(0));
        c.push(
            cmd(&[b"BF.MEXISTS", b"items:add", &other, item, item]),
            ints(&[0, 1, 1]),
        );
        c.push(cmd(&[b"BF.MADD", b"items:madd", item, item]), ints(&[1, 0]));
        c.push(
            cmd(&[
                b"BF.INSERT",
                b"items:ins",
                b"CAPACITY",
                b"5",
                b"ITEMS",
                item,
                &other,
            ]),
            ints(&[1, 1]),
        );
        c.push(
            cmd(&[b"BF.INSERT", b"items:ins", b"NOCREATE", b"ITEMS", item]),
            ints(&[0]),
        );
        c.push(cmd(&[b"BF.EXISTS", b"missing", item]), int(0));
        c.push(
            cmd(&[b"BF.EXISTS", SENTINEL_STR.as_bytes(), item]),
            err(texts::WRONGTYPE),
        );
        // hostile bytes as the key name: a fresh filter with the defaults
        let mut key = b"key:".to_vec();
        key.extend_from_slice(&item[..item.len().min(4096)]);
        key.extend_from_slice(n.to_string().as_bytes());
        c.push(cmd(&[b"BF.ADD", &key, item]), int(1));
        c.push(cmd(&[b"BF.CARD", &key]), int(1));
        c.check(
            cmd(&[b"BF.SCANDUMP", &key, b"0"]),
            "[1, header]",
            |r| matches!(r, Reply::Arr(v) if v.len() == 2 && v[0] == Reply::Int(1)),
        );
    }
}

/// Too few and too many arguments, per command (and the command name in odd case).
fn arity_cases(c: &mut Cases) {
    // --- arity: too few and too many, per command (and the command name in odd case)
    let commands: &[(&str, &[&str], usize, bool)] = &[
        // (command, a valid call, how many of its arguments are required, whether more
        // arguments are refused)
        (
            "BF.RESERVE",
            &["k", "0.01", "100", "EXPANSION", "2"],
            3,
            false,
        ),
        ("BF.ADD", &["k", "a"], 2, true),
        ("BF.MADD", &["k", "a"], 2, false),
        ("BF.EXISTS", &["k", "a"], 2, true),
        ("BF.MEXISTS", &["k", "a"], 2, false),
        ("BF.INSERT", &["k", "ITEMS", "a"], 3, false),
        ("BF.INFO", &["k", "CAPACITY"], 1, true),
        ("BF.CARD", &["k"], 1, true),
        ("BF.DEBUG", &["k"], 1, true),
        ("BF.SCANDUMP", &["k", "0"], 2, true),
        ("BF.LOADCHUNK", &["k", "1", "x"], 3, true),
    ];
    for &(name, valid, required, bounded) in commands {
        let odd_case = "bF.".to_string() + &name[3..].to_ascii_lowercase();
        for spelling in [name.to_string(), name.to_ascii_lowercase(), odd_case] {
            for n in 0..required {
                let mut args = vec![b(&spelling)];
                args.extend(valid[..n].iter().map(|s| b(s)));
                c.push(args, arity(name));
            }
            if bounded {
                let mut args = vec![b(&spelling)];
                args.extend(valid.iter().map(|s| b(s)));
                args.push(b("extra"));
                c.push(args.clone(), arity(name));
                args.push(b(""));
                c.push(args, arity(name));
            }
        }
    }
    // BF.RESERVE: 8 arguments without SEED, 10 with it
    c.push(
        cmd(&[
            b"BF.RESERVE",
            b"k",
            b"0.01",
            b"100",
            b"NONSCALING",
            b"NONSCALING",
            b"NONSCALING",
            b"NONSCALING",
        ]),
        arity("BF.RESERVE"),
    );
    c.push(
        cmd(&[
            b"BF.RESERVE",
            b"k",
            b"0.01",
            b"100",
            b"EXPANSION",
            b"2",
            b"EXPANSION",
            b"3",
        ]),
        arity("BF.RESERVE"),
    );
    c.push(
        cmd(&[
            b"BF.RESERVE",
            b"k",
            b"0.01",
            b"100",
            b"SEED",
            b"1",
            b"EXPANSION",
            b"2",
            b"NONSCALING",
            b"x",
        ]),
        arity("BF.RESERVE"),
    );
    // INSERT: no ITEMS, or nothing after it
    for tail in [
        &[][..],
        &[&b"ITEMS"[..]],
        &[b"CAPACITY", b"5"],
        &[b"NOCREATE", b"ITEMS"],
        &[b"CAPACITY"],
        &[b"CAPACITY", b"5", b"ERROR", b"0.1"],
        &[b"NONSCALING", b"NOCREATE"],
    ] {
        let mut args = cmd(&[b"BF.INSERT", b"k"]);
        args.extend(tail.iter().map(|t| t.to_vec()));
        c.push(args, arity("BF.INSERT"));
    }
    c.push(
        cmd(&[b"BF.INSERT", b"k", b"CAPACITY", b"ITEMS"]),
        err(texts::INSERT_BAD_CAPACITY),
    );
}

/// BF.RESERVE's options: spelling, repetition, order, unknown trailing arguments, SEED.
fn reserve_option_cases(c: &mut Cases) {
    // --- option spelling, repetition and order (each followed by a check of what it did)
    for (exp, nonscaling) in [
        ("EXPANSION", "NONSCALING"),
        ("expansion", "nonscaling"),
        ("Expansion", "NonScaling"),
        ("eXpAnSiOn", "nOnScAlInG"),
    ] {
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                exp.as_bytes(),
                b"3",
            ]),
            ok(),
        );
        c.push(cmd(&[b"BF.INFO", k.as_bytes(), b"expansion"]), ints(&[3]));
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                nonscaling.as_bytes(),
            ]),
            ok(),
        );
        c.push(
            cmd(&[b"BF.INFO", k.as_bytes(), b"EXPANSION"]),
            arr(vec![Reply::Nil]),
        );
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                nonscaling.as_bytes(),
                nonscaling.as_bytes(),
            ]),
            err("ERR NONSCALING is given twice"),
        );
        c.push(
            cmd(&[b"BF.INFO", k.as_bytes(), b"Expansion"]),
            err(texts::NOT_FOUND),
        );
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                exp.as_bytes(),
                b"2",
                nonscaling.as_bytes(),
            ]),
            err(texts::NONSCALING_EXPANSION),
        );
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                nonscaling.as_bytes(),
                exp.as_bytes(),
                b"2",
            ]),
            err(texts::NONSCALING_EXPANSION),
        );
        c.push(
            cmd(&[b"BF.RESERVE", k.as_bytes(), b"0.01", b"100", exp.as_bytes()]),
            err(texts::NO_EXPANSION),
        );
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                nonscaling.as_bytes(),
                exp.as_bytes(),
            ]),
            err(texts::NO_EXPANSION),
        );
        c.push(cmd(&[b"BF.EXISTS", k.as_bytes(), b"a"]), int(0));
        c.push(cmd(&[b"BF.INFO", k.as_bytes()]), err(texts::NOT_FOUND));
        // RedisBloom takes the first EXPANSION (a second one without a value too): rsbloom
        // refuses the second
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                exp.as_bytes(),
                b"5",
                exp.as_bytes(),
            ]),
            err("ERR EXPANSION is given twice"),
        );
        c.push(
            cmd(&[b"BF.INFO", k.as_bytes(), b"EXPANSION"]),
            err(texts::NOT_FOUND),
        );
    }
    // rsbloom: unknown trailing arguments to BF.RESERVE are an error (RedisBloom ignores them)
    for junk in ["x", "", "SEEDS", "EXPANSIONS", "NONSCALINGX", "\u{0}"] {
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                junk.as_bytes(),
            ]),
            // Quoted printable: the NUL as \x00 (a reply line can hold no NUL).
            err(&texts::unknown_argument(
                "BF.RESERVE",
                &junk.replace('\0', "\\x00"),
            )),
        );
    }
    // rsbloom's SEED option
    for (seed, good) in [
        ("0", true),
        ("18446744073709551615", true),
        ("18446744073709551616", false),
        ("-1", false),
        ("", false),
        ("1.5", false),
        ("nan", false),
        (" 1", false),
    ] {
        let k = c.key();
        c.push(
            cmd(&[
                b"BF.RESERVE",
                k.as_bytes(),
                b"0.01",
                b"100",
                b"seed",
                seed.as_bytes(),
            ]),
            if good { ok() } else { err(texts::BAD_SEED) },
        );
    }
    let k = c.key();
    c.push(
        cmd(&[b"BF.RESERVE", k.as_bytes(), b"0.01", b"100", b"SEED"]),
        err(texts::BAD_SEED),
    );
}

/// BF.INSERT's options: whole words in any case and any order; a word RedisBloom would read by
/// its first letters, and an option given twice, refused by name without creating the key.
fn insert_option_cases(c: &mut Cases) {
    for (opts, cap, expansion) in [
        (&[&b"capacity"[..], b"7"][..], 7, Some(2)),
        (&[b"Capacity", b"9"], 9, Some(2)),
        (&[b"cApAcItY", b"11", b"eXpAnSiOn", b"4"], 11, Some(4)),
        (&[b"expansion", b"3", b"nonscaling"], 100, None),
        (&[b"NONSCALING", b"EXPANSION", b"3"], 100, None),
        (&[b"NonScaling", b"error", b"0.01"], 100, None),
        (
            &[b"Error", b"0.001", b"EXPANSION", b"1", b"CAPACITY", b"50"],
            50,
            Some(1),
        ),
    ] {
        let k = c.key();
        let mut args = cmd(&[b"BF.INSERT", k.as_bytes()]);
        args.extend(opts.iter().map(|o| o.to_vec()));
        // everything after ITEMS is an item, options included
        args.extend([b("items"), b("a"), b("CAPACITY"), b("1")]);
        c.push(args, ints(&[1, 1, 1]));
        c.push(cmd(&[b"BF.INFO", k.as_bytes(), b"capacity"]), ints(&[cap]));
        c.push(
            cmd(&[b"BF.INFO", k.as_bytes(), b"EXPANSION"]),
            arr(vec![expansion.map_or(Reply::Nil, int)]),
        );
        c.push(cmd(&[b"BF.CARD", k.as_bytes()]), int(3));
    }
    for (opts, refusal) in [
        (
            &[&b"c"[..], b"5"][..],
            "ERR unknown argument 'c' for BF.INSERT",
        ),
        (&[b"cAp", b"11"], "ERR unknown argument 'cAp' for BF.INSERT"),
        (&[b"n"], "ERR unknown argument 'n' for BF.INSERT"),
        (
            &[b"ERROR", b"0.1", b"ex", b"5"],
            "ERR unknown argument 'ex' for BF.INSERT",
        ),
        (&[b"noc"], "ERR unknown argument 'noc' for BF.INSERT"),
        (
            &[b"Capacity", b"7", b"CAPACITY", b"9"],
            "ERR CAPACITY is given twice",
        ),
        (&[b"nocreate", b"NOCREATE"], "ERR NOCREATE is given twice"),
    ] {
        let k = c.key();
        let mut args = cmd(&[b"BF.INSERT", k.as_bytes()]);
        args.extend(opts.iter().map(|o| o.to_vec()));
        args.extend([b("ITEMS"), b("a")]);
        c.push(args, err(refusal));
        c.push(cmd(&[b"BF.CARD", k.as_bytes()]), int(0));
    }
    for noc in ["NOCREATE", "nocreate", "NoCreate"] {
        let k = c.key();
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), noc.as_bytes(), b"ITEMS", b"a"]),
            err(texts::NOT_FOUND),
        );
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), b"ITEMS", b"a", noc.as_bytes()]),
            ints(&[1, 1]),
        );
        c.push(
            cmd(&[b"BF.INSERT", k.as_bytes(), noc.as_bytes(), b"items", b"a"]),
            ints(&[0]),
        );
    }
}

/// BF.INFO's field names in any case.
fn info_option_cases(c: &mut Cases) {
    // BF.INFO fields in any case
    for (field, want) in [
        ("capacity", int(1000)),
        ("CaPaCiTy", int(1000)),
        ("items", int(4)),
        ("ITEMS", int(4)),
        ("filters", int(1)),
        ("Filters", int(1)),
        ("expansion", int(2)),
    ] {
        c.push(
            cmd(&[b"BF.INFO", SENTINEL.as_bytes(), field.as_bytes()]),
            arr(vec![want]),
        );
    }
    for field in [
        "cap",
        "CAPACITYX",
        "capacity ",
        "Number of filters",
        "SIZES",
    ] {
        c.push(
            cmd(&[b"BF.INFO", SENTINEL.as_bytes(), field.as_bytes()]),
            err(texts::INVALID_INFO_VALUE),
        );
    }
}

/// Every command against the sentinel string, and a second RESERVE of the sentinel filter.
fn wrongtype_cases(c: &mut Cases) {
    // --- every command against the sentinel string: WRONGTYPE, and the string survives
    let s = SENTINEL_STR.as_bytes();
    for args in [
        cmd(&[b"BF.RESERVE", s, b"0.01", b"100"]),
        cmd(&[b"BF.ADD", s, b"a"]),
        cmd(&[b"BF.MADD", s, b"a", b"b"]),
        cmd(&[b"BF.EXISTS", s, b"a"]),  // rsbloom: RedisBloom answers 0
        cmd(&[b"BF.MEXISTS", s, b"a"]), // rsbloom: RedisBloom answers [0]
        cmd(&[b"BF.INSERT", s, b"ITEMS", b"a"]),
        cmd(&[b"BF.INSERT", s, b"NOCREATE", b"ITEMS", b"a"]),
        cmd(&[b"BF.INFO", s]),
        cmd(&[b"BF.INFO", s, b"CAPACITY"]),
        cmd(&[b"BF.CARD", s]),
        cmd(&[b"BF.DEBUG", s]),
        cmd(&[b"BF.SCANDUMP", s, b"0"]),
        cmd(&[b"BF.LOADCHUNK", s, b"1", b"x"]),
        cmd(&[b"BF.LOADCHUNK", s, b"2", b"x"]),
    ] {
        c.push(args, err(texts::WRONGTYPE));
    }
    // the sentinel filter refuses a second RESERVE
    c.push(
        cmd(&[b"BF.RESERVE", SENTINEL.as_bytes(), b"0.01", b"100"]),
        err(texts::ITEM_EXISTS),
    );
}

#[test]
fn hostile_arguments_never_crash_and_get_exact_replies() {
    let server = Server::new();
    let mut con = server.conn();
    setup_sentinels(&mut con);
    // the targets of the item and LOADCHUNK cases: a false positive here would need 1e-9 luck
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "items:add", "1e-9", "10000", "SEED", "7"]
        ),
        ok()
    );
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "items:madd", "1e-9", "10000", "SEED", "8"]
        ),
        ok()
    );
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "items:ins", "1e-9", "10000", "SEED", "9"]
        ),
        ok()
    );
    assert_eq!(run(&mut con, &["BF.RESERVE", "sink", "0.01", "100"]), ok());

    let cases = hostile_cases();
    let checks = sentinel_checks();
    let mut tried = 0usize;
    for (args, expect) in &cases.list {
        let mut batch = vec![args.clone()];
        batch.extend(checks.iter().cloned());
        let replies = pipeline(&mut con, &batch);
        let context = show(args);
        match expect {
            Expect::Is(want) => assert_eq!(&replies[0], want, "reply to {context}"),
            Expect::Check(what, f) => {
                assert!(
                    f(&replies[0]),
                    "reply to {context}: want {what}, got {:?}",
                    replies[0]
                )
            }
        }
        assert_sentinels(&replies[1..], &context);
        tried += 1;
    }
    // the filters that took hostile items are still sound
    for key in ["items:add", "items:madd", "items:ins", "sink"] {
        assert_consistent(&mut con, key, key);
    }
    assert_eq!(run(&mut con, &["DEBUG", "RELOAD"]), ok());
    let replies = pipeline(&mut con, &sentinel_checks());
    assert_sentinels(&replies, "DEBUG RELOAD");
    assert!(server.log().contains("Ready to accept connections"));
    println!("hostile inputs tried: {tried}");
    assert!(tried > 1000, "{tried} cases");
}

// ---------------------------------------------------------------------------------------------
// LOADCHUNK fuzzing

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

fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut m = data.to_vec();
    match rng.below(5) {
        0 => m.truncate(rng.below(data.len() + 1)),
        1 | 2 => {
            for _ in 0..=rng.below(3) {
                if !m.is_empty() {
                    let i = rng.below(m.len());
                    m[i] ^= 1 << rng.below(8);
                }
            }
        }
        3 => {
            for _ in 0..=rng.below(4) {
                if !m.is_empty() {
                    let i = rng.below(m.len());
                    m[i] = rng.next() as u8;
                }
            }
        }
        _ => {
            let n = rng.below(32);
            m.extend(rng.bytes(n));
        }
    }
    m
}

fn allowed_dump_error(e: &str) -> bool {
    e == texts::BAD_DATA
        || e == texts::NO_LINK
        || e == texts::CHUNK_TOO_BIG
        || e.starts_with("ERR filter would need")
}

#[test]
fn loadchunk_fuzzed_headers_and_chunks() {
    // a small per-filter limit, so that a header claiming big links cannot take much memory
    let server = Server::with_args(&["MAX_FILTER_BYTES", "4194304"], &[]);
    let mut con = server.conn();
    setup_sentinels(&mut con);
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "src", "0.01", "40", "EXPANSION", "2"]
        ),
        ok()
    );
    let items: Vec<String> = (0..200).map(|i| format!("item{i}")).collect();
    let mut madd = vec!["BF.MADD".to_string(), "src".into()];
    madd.extend(items.iter().cloned());
    run(&mut con, &madd);
    // and one NONSCALING filter, whose header differs
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "src2", "0.001", "300", "NONSCALING"]
        ),
        ok()
    );
    run(&mut con, &["BF.MADD", "src2", "a", "b", "c"]);
    let streams = [scandump(&mut con, "src"), scandump(&mut con, "src2")];
    assert!(info_int(&info(&mut con, "src"), "Number of filters") >= 3);

    // the unmutated stream loads and reads back
    let (header, chunks) = &streams[0];
    assert_eq!(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"copy", b"1", header]),
        ok()
    );
    for (it, data) in chunks {
        assert_eq!(
            run(
                &mut con,
                &[
                    &b"BF.LOADCHUNK"[..],
                    b"copy",
                    it.to_string().as_bytes(),
                    data
                ]
            ),
            ok()
        );
    }
    let mut mexists = vec!["BF.MEXISTS".to_string(), "copy".into()];
    mexists.extend(items.iter().cloned());
    assert_eq!(run(&mut con, &mexists), ints(&[1; 200]));

    let mut rng = Rng(0x5eed);
    let mut headers_tried = 0;
    let mut headers_accepted = 0;
    let mut mutated: Vec<Vec<u8>> = Vec::new();
    for (header, _) in &streams {
        for len in 0..header.len() {
            mutated.push(header[..len].to_vec());
        }
        for _ in 0..1200 {
            mutated.push(mutate(&mut rng, header));
        }
    }
    for _ in 0..200 {
        let n = rng.below(400);
        mutated.push(rng.bytes(n));
    }
    for (n, m) in mutated.iter().enumerate() {
        let stream = &streams[n % 2];
        let replies = pipeline(
            &mut con,
            &[
                cmd(&[b"DEL", b"fz"]),
                cmd(&[b"BF.LOADCHUNK", b"fz", b"1", m]),
            ],
        );
        headers_tried += 1;
        match &replies[1] {
            Reply::Status(s) if s == "OK" => {
                headers_accepted += 1;
                assert_consistent(&mut con, "fz", &format!("header #{n}"));
                // feed it chunks: the real ones at their iterators, some mutated
                for (it, data) in &stream.1 {
                    let data = if rng.below(2) == 0 {
                        data.clone()
                    } else {
                        mutate(&mut rng, data)
                    };
                    match run(
                        &mut con,
                        &[
                            &b"BF.LOADCHUNK"[..],
                            b"fz",
                            it.to_string().as_bytes(),
                            &data,
                        ],
                    ) {
                        Reply::Status(_) => {}
                        Reply::Err(e) => {
                            assert!(allowed_dump_error(&e), "chunk after header #{n}: {e}")
                        }
                        other => panic!("chunk after header #{n}: {other:?}"),
                    }
                }
                assert_consistent(&mut con, "fz", &format!("header #{n} + chunks"));
            }
            Reply::Err(e) => assert!(allowed_dump_error(e), "header #{n}: {e}"),
            other => panic!("header #{n}: {other:?}"),
        }
        if n % 50 == 0 {
            assert_sentinels(
                &pipeline(&mut con, &sentinel_checks()),
                &format!("header #{n}"),
            );
        }
    }

    // chunks: mutated data at real and random iterators into a loaded copy
    let mut chunks_tried = 0;
    let (header, chunks) = &streams[0];
    let total: i64 = chunks.iter().map(|(_, d)| d.len() as i64).sum();
    assert_eq!(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"cz", b"1", header]),
        ok()
    );
    for n in 0..1500 {
        let (it, data) = &chunks[rng.below(chunks.len())];
        let data = mutate(&mut rng, data);
        let it = match rng.below(10) {
            0..=5 => *it,
            6..=8 => rng.below(total as usize + 200) as i64 - 5,
            _ => rng.next() as i64,
        };
        match run(
            &mut con,
            &[
                &b"BF.LOADCHUNK"[..],
                b"cz",
                it.to_string().as_bytes(),
                &data,
            ],
        ) {
            Reply::Status(_) => {}
            Reply::Err(e) => assert!(allowed_dump_error(&e), "chunk #{n} at {it}: {e}"),
            other => panic!("chunk #{n}: {other:?}"),
        }
        chunks_tried += 1;
        if n % 100 == 0 {
            assert_consistent(&mut con, "cz", &format!("chunk #{n}"));
            assert_sentinels(
                &pipeline(&mut con, &sentinel_checks()),
                &format!("chunk #{n}"),
            );
        }
    }
    assert_consistent(&mut con, "cz", "after the chunks");
    assert_sentinels(&pipeline(&mut con, &sentinel_checks()), "LOADCHUNK fuzzing");
    println!(
        "LOADCHUNK: {headers_tried} mutated headers ({headers_accepted} accepted), {chunks_tried} mutated chunks"
    );
}

// ---------------------------------------------------------------------------------------------
// DUMP / RESTORE with corrupted payloads

/// Redis's CRC-64 (Jones polynomial, reflected, init 0), which ends every DUMP payload.
fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0xad93_d235_94c9_35a9_u64.reverse_bits();
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// `body` (type byte + value) + the 2-byte RDB version of `original` + a correct CRC.
fn with_crc(body: &[u8], original: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&original[original.len() - 10..original.len() - 8]);
    let crc = crc64(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

#[test]
fn restore_of_corrupted_dump_payloads_errors_and_never_crashes() {
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    let server = Server::new();
    let mut con = server.conn();
    setup_sentinels(&mut con);
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "d", "0.01", "20", "EXPANSION", "2"]
        ),
        ok()
    );
    let items: Vec<String> = (0..70).map(|i| format!("x{i}")).collect();
    let mut madd = vec!["BF.MADD".to_string(), "d".into()];
    madd.extend(items.iter().cloned());
    run(&mut con, &madd);
    let Reply::Bulk(payload) = run(&mut con, &["DUMP", "d"]) else {
        panic!("DUMP")
    };
    // the payload's CRC is the one computed here
    assert_eq!(with_crc(&payload[..payload.len() - 10], &payload), payload);
    assert_eq!(
        run(&mut con, &[&b"RESTORE"[..], b"r", b"0", &payload]),
        ok()
    );
    assert_consistent(&mut con, "r", "clean restore");

    restore_corrupted(&mut con, &payload, "MBbloom--");
    // A valkey-bloom filter (its BF.LOAD blob, from valkey-bloom's AOF rewrite), dumped here
    // so that the payload has this server's RDB version.
    let blob = valkey_bloom_blob("bf:scaling");
    assert_eq!(run(&mut con, &[&b"BF.LOAD"[..], b"v", &blob]), ok());
    let Reply::Bulk(payload) = run(&mut con, &["DUMP", "v"]) else {
        panic!("DUMP")
    };
    restore_corrupted(&mut con, &payload, "bloomfltr");
}

/// RESTORE of `payload` (a key of type `kind`) corrupted every way: bit flips and random bytes
/// with a recomputed CRC (so the module's loader sees them), truncations, and flips the CRC
/// catches. Each is refused, or is a consistent filter of that type; no server crash.
fn restore_corrupted(con: &mut redis::Connection, payload: &[u8], kind: &str) {
    let body = &payload[..payload.len() - 10];
    let mut rng = Rng(0xd0d0);
    let mut corrupt: Vec<(Vec<u8>, &str)> = Vec::new();
    for i in 0..body.len() {
        // every byte, one random bit flipped, with a valid CRC: the module's loader sees it
        let mut m = body.to_vec();
        m[i] ^= 1 << rng.below(8);
        corrupt.push((with_crc(&m, payload), "bit flip, CRC recomputed"));
        let mut m = body.to_vec();
        m[i] = rng.next() as u8;
        corrupt.push((with_crc(&m, payload), "random byte, CRC recomputed"));
        // truncated there, with a valid CRC
        corrupt.push((with_crc(&body[..i], payload), "truncated, CRC recomputed"));
    }
    for _ in 0..300 {
        let mut m = body.to_vec();
        for _ in 0..=rng.below(6) {
            let i = rng.below(m.len());
            m[i] = rng.next() as u8;
        }
        corrupt.push((with_crc(&m, payload), "random bytes, CRC recomputed"));
    }
    for len in 0..payload.len() {
        corrupt.push((payload[..len].to_vec(), "truncated"));
    }
    for _ in 0..100 {
        let mut m = payload.to_vec();
        let i = rng.below(m.len());
        m[i] ^= 1 << rng.below(8);
        corrupt.push((m, "bit flip"));
    }
    let mut accepted = 0;
    for (n, (p, how)) in corrupt.iter().enumerate() {
        let key = format!("r{}", n % 7);
        let replace = n % 2 == 0;
        let mut args = cmd(&[b"RESTORE", key.as_bytes(), b"0", p]);
        if replace {
            args.push(b("REPLACE"));
        } else {
            run(con, &["DEL", &key]);
        }
        match run(con, &args) {
            Reply::Err(_) => {}
            Reply::Status(s) if s == "OK" => {
                accepted += 1;
                // only a payload that is still a valid filter may be accepted (a flipped bit
                // in a bit array, say)
                assert_eq!(run(con, &["TYPE", &key]), Reply::Status(kind.into()));
                assert_consistent(con, &key, &format!("payload #{n} ({how})"));
            }
            other => panic!("RESTORE #{n} ({how}): {other:?}"),
        }
        if n % 25 == 0 {
            assert_sentinels(
                &pipeline(con, &sentinel_checks()),
                &format!("payload #{n} ({how})"),
            );
        }
    }
    assert_sentinels(&pipeline(con, &sentinel_checks()), "RESTORE fuzzing");
    println!(
        "RESTORE of {kind}: {} corrupted payloads tried, {accepted} accepted as valid filters",
        corrupt.len()
    );
}

// ---------------------------------------------------------------------------------------------
// corrupted RDB files

/// Whether a server's log says it refused its RDB.
fn corrupt_logged(log: &str) -> bool {
    log.contains("Internal error in RDB")
        || log.contains("Short read")
        || log.contains("RDB CRC error")
        || log.contains("Wrong RDB checksum")
        || log.contains("corrupt")
        || log.contains("Bad data format")
}

#[test]
fn corrupted_rdb_files_are_refused_or_load_consistent_filters() {
    let rdb = {
        let server = Server::new();
        let mut con = server.conn();
        setup_sentinels(&mut con);
        assert_eq!(
            run(
                &mut con,
                &["BF.RESERVE", "f1", "0.01", "30", "EXPANSION", "3"]
            ),
            ok()
        );
        assert_eq!(
            run(&mut con, &["BF.RESERVE", "f2", "0.001", "50", "NONSCALING"]),
            ok()
        );
        let items: Vec<String> = (0..100).map(|i| format!("i{i}")).collect();
        let mut madd = vec!["BF.MADD".to_string(), "f1".into()];
        madd.extend(items.iter().cloned());
        run(&mut con, &madd);
        run(&mut con, &["BF.MADD", "f2", "a", "b"]);
        assert_eq!(run(&mut con, &["SAVE"]), ok());
        std::fs::read(server.dir.join("dump.rdb")).unwrap()
    };
    // flip bytes past the key names, where the module values are
    let first_key = rdb
        .windows(SENTINEL.len())
        .position(|w| w == SENTINEL.as_bytes())
        .or_else(|| rdb.windows(2).position(|w| w == b"f1"))
        .expect("a key name in the RDB");
    let end = rdb.len() - 9; // EOF opcode + CRC
    let mut rng = Rng(0x4db);
    let mut files: Vec<(Vec<u8>, &str, bool)> = Vec::new();
    for _ in 0..30 {
        let mut m = rdb.clone();
        let i = first_key + rng.below(end - first_key);
        m[i] ^= 1 << rng.below(8);
        files.push((m, "bit flip", false));
    }
    for _ in 0..15 {
        let mut m = rdb.clone();
        for _ in 0..4 {
            let i = first_key + rng.below(end - first_key);
            m[i] = rng.next() as u8;
        }
        files.push((m, "random bytes", false));
    }
    for k in 1..=8 {
        let len = first_key + (end - first_key) * k / 9;
        files.push((rdb[..len].to_vec(), "truncated", false));
    }
    // with checksums on (the default), a flipped byte is refused before any module code runs
    let mut m = rdb.clone();
    m[first_key + (end - first_key) / 2] ^= 0x10;
    files.push((m, "bit flip, rdbchecksum yes", true));

    let (mut refused, mut refused_then_hung, mut loaded) = (0, 0, 0);
    for (n, (file, how, checksum)) in files.iter().enumerate() {
        let context = format!("RDB #{n} ({how})");
        let checksum = ["--rdbchecksum", if *checksum { "yes" } else { "no" }];
        match Server::start_on_rdb(file, &checksum, corrupt_logged) {
            RdbStart::Refused => refused += 1,
            RdbStart::RefusedThenHung => refused_then_hung += 1,
            RdbStart::Loaded(server) => {
                loaded += 1;
                let mut con = server.conn();
                assert_eq!(
                    run(&mut con, &["PING"]),
                    Reply::Status("PONG".into()),
                    "{context}"
                );
                let Reply::Arr(keys) = run(&mut con, &["KEYS", "*"]) else {
                    panic!("KEYS")
                };
                for k in keys {
                    let Reply::Bulk(k) = k else {
                        panic!("key {k:?}")
                    };
                    let k = String::from_utf8_lossy(&k).into_owned();
                    if run(&mut con, &["TYPE", &k]) == Reply::Status("MBbloom--".into()) {
                        assert_consistent(&mut con, &k, &format!("{context}, key {k}"));
                    }
                }
            }
        }
    }
    println!(
        "RDB: {} corrupted files tried: {refused} refused (exited), {refused_then_hung} refused \
         and then stuck in Redis's own redis-check-rdb (killed), {loaded} loaded",
        files.len()
    );
    assert_eq!(refused + refused_then_hung + loaded, files.len());
}

// ---------------------------------------------------------------------------------------------
// 2. memory

/// The limit error names the limit and how it is set (`MAX_FILTER_BYTES`).
fn names_limit(e: &str) -> bool {
    e.starts_with("ERR filter would need ")
        && e.contains("over the per-filter limit of 65536 bytes")
        && e.contains("MAX_FILTER_BYTES")
}

#[test]
fn per_filter_limit_holds_for_every_way_of_creating_or_growing() {
    let server = Server::with_args(
        &["MAX_FILTER_BYTES", "65536", "INITIAL_SIZE", "10000000"],
        &[],
    );
    let mut con = server.conn();
    let refused = |r: Reply, what: &str| {
        let e = r.err_text().to_string();
        assert!(names_limit(&e), "{what}: {e}");
    };
    refused(
        run(&mut con, &["BF.RESERVE", "r", "0.01", "1000000"]),
        "RESERVE",
    );
    refused(
        run(
            &mut con,
            &["BF.RESERVE", "r", "0.01", "9223372036854775807"],
        ),
        "RESERVE max",
    );
    refused(
        run(&mut con, &["BF.RESERVE", "r", "1e-300", "100000"]),
        "RESERVE tiny rate",
    );
    refused(
        run(
            &mut con,
            &["BF.INSERT", "i", "CAPACITY", "1000000", "ITEMS", "a"],
        ),
        "INSERT CAPACITY",
    );
    // implicit creation with INITIAL_SIZE 10000000
    refused(run(&mut con, &["BF.ADD", "a", "x"]), "BF.ADD");
    let r = run(&mut con, &["BF.MADD", "a", "x", "y"]);
    refused(r, "BF.MADD");
    refused(
        run(&mut con, &["BF.INSERT", "a", "ITEMS", "x"]),
        "BF.INSERT",
    );
    for k in ["r", "i", "a"] {
        assert_eq!(run(&mut con, &["EXISTS", k]), int(0), "{k} was not created");
    }
    // a filter within the limit is fine
    assert_eq!(
        run(&mut con, &["BF.RESERVE", "small", "0.01", "1000"]),
        ok()
    );

    // scaling: add until refused; the error names the limit, earlier items stay present
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "s", "0.01", "100", "EXPANSION", "2"]
        ),
        ok()
    );
    let mut added = Vec::new();
    let mut refusal = None;
    for batch in 0..400 {
        let items: Vec<String> = (0..200).map(|i| format!("s{batch}-{i}")).collect();
        let mut madd = vec!["BF.MADD".to_string(), "s".into()];
        madd.extend(items.iter().cloned());
        let Reply::Arr(replies) = run(&mut con, &madd) else {
            panic!("MADD")
        };
        for (item, r) in items.into_iter().zip(replies) {
            match r {
                Reply::Int(_) => added.push(item),
                Reply::Err(e) => {
                    refusal.get_or_insert(e);
                }
                other => panic!("MADD element {other:?}"),
            }
        }
        if refusal.is_some() {
            break;
        }
    }
    let e = refusal.expect("the scaling filter hit the limit");
    assert!(names_limit(&e), "{e}");
    assert!(added.len() > 1000, "{} items before the limit", added.len());
    for chunk in added.chunks(500) {
        let mut mexists = vec!["BF.MEXISTS".to_string(), "s".into()];
        mexists.extend(chunk.iter().cloned());
        assert_eq!(run(&mut con, &mexists), ints(&vec![1; chunk.len()]));
    }
    match run(&mut con, &["BF.ADD", "s", "one more"]) {
        Reply::Int(0) => {} // a false positive needs no room
        r => refused(r, "BF.ADD at the limit"),
    }
    assert_consistent_or_full(&mut con, "s");
    let size = info_int(&info(&mut con, "s"), "Size");
    assert!(size <= 65536 + 4096, "Size {size} beyond the limit");

    // LOADCHUNK: a real header of a big filter, and a RedisBloom header claiming a huge link
    let big = Server::new();
    let mut bcon = big.conn();
    assert_eq!(
        run(&mut bcon, &["BF.RESERVE", "big", "0.01", "1000000"]),
        ok()
    );
    let (header, _) = scandump(&mut bcon, "big");
    refused(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"lc", b"1", &header]),
        "LOADCHUNK header",
    );
    for bits in [1u64 << 40, 1 << 62, u64::MAX] {
        let h = redisbloom_header(bits);
        match run(&mut con, &[&b"BF.LOADCHUNK"[..], b"lc", b"1", &h]) {
            Reply::Err(e) => assert!(
                e == texts::BAD_DATA || names_limit(&e),
                "huge link header ({bits} bits): {e}"
            ),
            other => panic!("huge link header ({bits} bits) accepted: {other:?}"),
        }
    }
    assert_eq!(run(&mut con, &["EXISTS", "lc"]), int(0));
    assert_eq!(run(&mut con, &["PING"]), Reply::Status("PONG".into()));
}

/// After the limit the filter is still consistent (ADD may be refused, which is allowed).
fn assert_consistent_or_full(con: &mut redis::Connection, key: &str) {
    assert_consistent(con, key, "at the limit");
}

/// A RedisBloom SCANDUMP header (20 + 53 bytes) for one link of `bits` bits at 1%.
fn redisbloom_header(bits: u64) -> Vec<u8> {
    let bpe = 9.585_058_377_367_439_f64;
    let entries = (bits as f64 / bpe) as u64;
    let mut h = Vec::new();
    h.extend_from_slice(&0u64.to_le_bytes()); // size
    h.extend_from_slice(&1u32.to_le_bytes()); // nfilters
    h.extend_from_slice(&(1u32 | 4).to_le_bytes()); // NOROUND | FORCE64
    h.extend_from_slice(&2u32.to_le_bytes()); // growth
    h.extend_from_slice(&(bits / 8).to_le_bytes()); // bytes
    h.extend_from_slice(&bits.to_le_bytes()); // bits
    h.extend_from_slice(&0u64.to_le_bytes()); // size
    h.extend_from_slice(&0.01f64.to_le_bytes()); // error
    h.extend_from_slice(&bpe.to_le_bytes()); // bpe
    h.extend_from_slice(&7u32.to_le_bytes()); // hashes
    h.extend_from_slice(&entries.to_le_bytes()); // entries
    h.push(0); // n2
    h
}

#[test]
fn maxmemory_refuses_writes_but_serves_reads() {
    let server = Server::with_args(
        &[],
        &["--maxmemory", "20mb", "--maxmemory-policy", "noeviction"],
    );
    let mut con = server.conn();
    assert_eq!(run(&mut con, &["BF.RESERVE", "small", "0.01", "100"]), ok());
    assert_eq!(run(&mut con, &["BF.ADD", "small", "present"]), int(1));
    // one filter of ~26 MB takes the server past maxmemory (the check runs before a command)
    assert_eq!(
        run(&mut con, &["BF.RESERVE", "big", "0.0001", "10000000"]),
        ok()
    );
    const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
    for args in [
        vec!["BF.ADD", "new", "x"],
        vec!["BF.ADD", "small", "y"],
        vec!["BF.MADD", "new", "x"],
        vec!["BF.INSERT", "new", "ITEMS", "x"],
        vec!["BF.RESERVE", "new2", "0.01", "100"],
        vec!["BF.LOADCHUNK", "new3", "1", "x"],
        vec!["SET", "str", "v"],
    ] {
        assert_eq!(run(&mut con, &args), err(OOM), "{args:?}");
    }
    assert_eq!(run(&mut con, &["BF.EXISTS", "small", "present"]), int(1));
    assert_eq!(
        run(&mut con, &["BF.MEXISTS", "small", "present", "absent"]),
        ints(&[1, 0])
    );
    assert_eq!(run(&mut con, &["BF.EXISTS", "big", "x"]), int(0));
    assert_eq!(info_int(&info(&mut con, "big"), "Capacity"), 10_000_000);
    assert_eq!(run(&mut con, &["BF.CARD", "small"]), int(1));
    assert!(matches!(run(&mut con, &["BF.DEBUG", "big"]), Reply::Arr(_)));
    assert!(matches!(
        run(&mut con, &["BF.SCANDUMP", "small", "0"]),
        Reply::Arr(_)
    ));
    for k in ["new", "new2", "new3", "str"] {
        assert_eq!(run(&mut con, &["EXISTS", k]), int(0));
    }
    // deleting is allowed, and then writes work again
    assert_eq!(run(&mut con, &["DEL", "big"]), int(1));
    assert_eq!(run(&mut con, &["BF.ADD", "new", "x"]), int(1));
}
