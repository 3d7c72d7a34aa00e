//! Hostile arguments to every BF command: numbers, items, arities, options, wrong types, each
//! with its exact reply.

use super::*;

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
