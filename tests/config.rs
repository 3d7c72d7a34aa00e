//! Module configs (`bf.error-rate`, `bf.initial-size`, `bf.expansion`, `bf.max-filter-bytes`:
//! CONFIG GET/SET, load arguments, the command line) and the `bf_stats` INFO section.

mod common;

use common::*;

fn config_get(c: &mut redis::Connection, name: &str) -> String {
    match run(c, &["CONFIG", "GET", name]) {
        Reply::Arr(v) if v.len() == 2 => match &v[1] {
            Reply::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("CONFIG GET {name}: {other:?}"),
        },
        Reply::Map(m) if m.len() == 1 => match &m[0].1 {
            Reply::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("CONFIG GET {name}: {other:?}"),
        },
        other => panic!("CONFIG GET {name}: {other:?}"),
    }
}

fn config_set(c: &mut redis::Connection, name: &str, value: &str) -> Reply {
    run(c, &["CONFIG", "SET", name, value])
}

/// The four configs as CONFIG GET shows them.
fn all_configs(c: &mut redis::Connection) -> [String; 4] {
    [
        "bf.error-rate",
        "bf.initial-size",
        "bf.expansion",
        "bf.max-filter-bytes",
    ]
    .map(|n| config_get(c, n))
}

fn strings(v: [&str; 4]) -> [String; 4] {
    v.map(String::from)
}

/// The value of `field:` in the first link line of BF.DEBUG.
fn first_link_field(c: &mut redis::Connection, key: &str, field: &str) -> String {
    let lines = debug_lines(c, key);
    let prefix = format!("{field}:");
    lines[1]
        .split(' ')
        .find_map(|w| w.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {field} in {lines:?}"))
        .to_string()
}

/// Total bit-array bytes of a filter, from BF.DEBUG.
fn debug_bytes(c: &mut redis::Connection, key: &str) -> u64 {
    debug_lines(c, key)[1..]
        .iter()
        .map(|l| {
            l.split(' ')
                .find_map(|w| w.strip_prefix("bytes:"))
                .expect("bytes field")
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

fn capacity(c: &mut redis::Connection, key: &str) -> Reply {
    match run(c, &["BF.INFO", key, "CAPACITY"]) {
        Reply::Arr(mut v) if v.len() == 1 => v.remove(0),
        other => panic!("BF.INFO {key} CAPACITY: {other:?}"),
    }
}

fn expansion(c: &mut redis::Connection, key: &str) -> Reply {
    match run(c, &["BF.INFO", key, "EXPANSION"]) {
        Reply::Arr(mut v) if v.len() == 1 => v.remove(0),
        other => panic!("BF.INFO {key} EXPANSION: {other:?}"),
    }
}

/// The Bloom filters' fields of the `bf_stats` INFO section as `(field, value)` pairs, without
/// the `bf_` prefix (the cuckoo filters' `cf_` fields are tests/cuckoo.rs's).
fn stats(c: &mut redis::Connection, section: &str) -> Vec<(String, u64)> {
    let text = match run(c, &["INFO", section]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("INFO {section}: {other:?}"),
    };
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    assert_eq!(lines.next(), Some("# bf_stats"), "{text}");
    lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
            let k = k.strip_prefix("bf_").unwrap_or_else(|| panic!("{l:?}"));
            (k.to_string(), v.parse().unwrap_or_else(|_| panic!("{l:?}")))
        })
        .filter(|(k, _)| !k.starts_with("cf_") && !k.starts_with("defrag_"))
        .collect()
}

fn stat(c: &mut redis::Connection, field: &str) -> u64 {
    stats(c, "bf")
        .into_iter()
        .find(|(k, _)| k == field)
        .unwrap_or_else(|| panic!("no bf_{field}"))
        .1
}

/// Checks INFO bf's fields, waiting (bounded) for the gauges: Valkey frees a deleted value in
/// a background thread (its `lazyfree-lazy-user-del` is `yes`), so the gauges drop a moment
/// after DEL there; Redis 7.0 and 7.4 free small values at once.
fn expect_stats(s: &Server, c: &mut redis::Connection, values: [u64; 6]) {
    let [filters, bytes, items, adds, checks, refusals] = values;
    let want: Vec<(String, u64)> = [
        ("filters", filters),
        ("bytes", bytes),
        ("items", items),
        ("adds", adds),
        ("checks", checks),
        ("refusals", refusals),
    ]
    .iter()
    .map(|&(k, v)| (k.to_string(), v))
    .collect();
    s.wait_for(&format!("INFO bf to show {want:?}"), 10, || {
        stats(c, "bf") == want
    });
    assert_eq!(stats(c, "bf"), want, "INFO bf");
    assert_eq!(stats(c, "bf_stats"), want, "INFO bf_stats");
}

#[test]
fn config_defaults() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.01", "100", "2", "2147483648"])
    );
    // CONFIG GET with a pattern lists all seven, the cuckoo filters' sub-filter limit, AT's
    // tolerance and bf.expandable too.
    match run(&mut c, &["CONFIG", "GET", "bf.*"]) {
        Reply::Arr(v) => assert_eq!(v.len(), 14, "{v:?}"),
        Reply::Map(m) => assert_eq!(m.len(), 7, "{m:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        run(&mut c, &["CONFIG", "GET", "bf.cf-max-expansions"]),
        arr(vec![bulk("bf.cf-max-expansions"), bulk("32")])
    );
    assert_eq!(
        run(&mut c, &["CONFIG", "GET", "bf.at-tolerance"]),
        arr(vec![bulk("bf.at-tolerance"), bulk("1000")])
    );
}

#[test]
fn config_set_changes_new_filters() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "before", "x"]), int(1));

    assert_eq!(config_set(&mut c, "bf.error-rate", "0.02"), ok());
    assert_eq!(config_set(&mut c, "bf.initial-size", "500"), ok());
    assert_eq!(config_set(&mut c, "bf.expansion", "3"), ok());
    assert_eq!(
        all_configs(&mut c),
        strings(["0.02", "500", "3", "2147483648"])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "scaling", "x"]), int(1));
    assert_eq!(capacity(&mut c, "scaling"), int(500));
    assert_eq!(expansion(&mut c, "scaling"), int(3));
    // a scaling chain's first link takes half the rate
    assert_eq!(first_link_field(&mut c, "scaling", "ratio"), "0.01");
    assert_eq!(first_link_field(&mut c, "scaling", "capacity"), "500");

    // expansion 0: new filters are NONSCALING with the whole rate
    assert_eq!(config_set(&mut c, "bf.expansion", "0"), ok());
    assert_eq!(config_get(&mut c, "bf.expansion"), "0");
    assert_eq!(run(&mut c, &["BF.MADD", "ns", "a", "b"]), ints(&[1, 1]));
    assert_eq!(expansion(&mut c, "ns"), Reply::Nil);
    assert_eq!(first_link_field(&mut c, "ns", "ratio"), "0.02");
    // BF.RESERVE without EXPANSION also follows the default
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.1", "10"]), ok());
    assert_eq!(expansion(&mut c, "r"), Reply::Nil);

    // filters made before keep their shape
    assert_eq!(capacity(&mut c, "before"), int(100));
    assert_eq!(expansion(&mut c, "before"), int(2));
    assert_eq!(first_link_field(&mut c, "before", "ratio"), "0.005");

    // the shortest text that round-trips
    assert_eq!(config_set(&mut c, "bf.error-rate", "1e-3"), ok());
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.001");
    assert_eq!(config_set(&mut c, "bf.error-rate", "0.1"), ok());
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.1");
}

#[test]
fn invalid_config_values_are_refused() {
    let s = Server::new();
    let mut c = s.conn();
    let bad = [
        ("bf.error-rate", "0"),
        ("bf.error-rate", "1"),
        ("bf.error-rate", "-0.5"),
        ("bf.error-rate", "1.5"),
        ("bf.error-rate", "nan"),
        ("bf.error-rate", "inf"),
        ("bf.error-rate", "0.01x"),
        ("bf.error-rate", " 0.01"),
        ("bf.error-rate", ""),
        ("bf.error-rate", "abc"),
        ("bf.initial-size", "0"),
        ("bf.initial-size", "-1"),
        ("bf.initial-size", "abc"),
        ("bf.initial-size", "1.5"),
        ("bf.expansion", "-1"),
        ("bf.expansion", "4294967296"),
        ("bf.expansion", "x"),
        ("bf.max-filter-bytes", "63"),
        ("bf.max-filter-bytes", "-1"),
        ("bf.max-filter-bytes", "lots"),
    ];
    for (name, value) in bad {
        let r = config_set(&mut c, name, value);
        assert!(r.is_err(), "CONFIG SET {name} {value:?}: {r:?}");
        assert!(r.err_text().contains(name), "{r:?}");
        assert_eq!(
            all_configs(&mut c),
            strings(["0.01", "100", "2", "2147483648"]),
            "after CONFIG SET {name} {value:?}"
        );
    }
    let r = config_set(&mut c, "bf.error-rate", "1");
    assert!(
        r.err_text()
            .contains("bf.error-rate must be a number between 0 and 1, exclusive"),
        "{r:?}"
    );
    // the range ends are accepted
    assert_eq!(config_set(&mut c, "bf.expansion", "4294967295"), ok());
    assert_eq!(config_set(&mut c, "bf.max-filter-bytes", "64"), ok());
    assert_eq!(config_set(&mut c, "bf.initial-size", "1"), ok());
    assert_eq!(
        all_configs(&mut c),
        strings(["0.01", "1", "4294967295", "64"])
    );
    // a memory config takes units
    assert_eq!(config_set(&mut c, "bf.max-filter-bytes", "1mb"), ok());
    assert_eq!(config_get(&mut c, "bf.max-filter-bytes"), "1048576");
}

#[test]
fn load_args_show_in_config_get() {
    let s = Server::with_args(
        &[
            "ERROR_RATE",
            "0.001",
            "INITIAL_SIZE",
            "300",
            "EXPANSION",
            "0",
            "MAX_FILTER_BYTES",
            "1000000",
        ],
        &[],
    );
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.001", "300", "0", "1000000"])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "k", "x"]), int(1));
    assert_eq!(capacity(&mut c, "k"), int(300));
    assert_eq!(expansion(&mut c, "k"), Reply::Nil);
    assert_eq!(first_link_field(&mut c, "k", "ratio"), "0.001");
    // The load log line names every setting, with its value.
    let log = s.log();
    let line = log
        .lines()
        .find(|l| l.contains("loaded as module 'bf'"))
        .expect("the load line");
    for setting in [
        "bf.error-rate 0.001",
        "bf.initial-size 300",
        "bf.expansion 0",
        "bf.max-filter-bytes 1000000",
        "bf.cf-max-expansions 32",
    ] {
        assert!(line.contains(setting), "{setting} in {line}");
    }
}

/// `MAX_FILTER_BYTES` takes the units of `bf.max-filter-bytes` (`1gb`), and names them when
/// a value is refused.
#[test]
fn the_memory_load_argument_takes_the_configs_units() {
    for (given, bytes) in [("1gb", 1u64 << 30), ("64MB", 64 << 20), ("5k", 5000)] {
        let s = Server::with_args(&["MAX_FILTER_BYTES", given], &[]);
        let mut c = s.conn();
        assert_eq!(all_configs(&mut c)[3], bytes.to_string(), "{given}");
    }
    for given in ["1tb", "1.5gb", "gb", "63"] {
        match Server::try_with_args(&["MAX_FILTER_BYTES", given], &[]) {
            Ok(_) => panic!("module loaded with MAX_FILTER_BYTES {given}"),
            Err(log) => assert!(
                log.contains("MAX_FILTER_BYTES must be a byte count from 64 to"),
                "{given}: {log}"
            ),
        }
    }
}

#[test]
fn configs_on_the_command_line() {
    let s = Server::with_args(&[], &["--bf.initial-size", "500"]);
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.01", "500", "2", "2147483648"])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "k", "x"]), int(1));
    assert_eq!(capacity(&mut c, "k"), int(500));
    drop(s);

    // configs override the load arguments; the others keep the load arguments' values
    let s = Server::with_args(
        &["INITIAL_SIZE", "300", "ERROR_RATE", "0.05"],
        &["--bf.initial-size", "700", "--bf.expansion", "4"],
    );
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.05", "700", "4", "2147483648"])
    );
    drop(s);

    // an invalid value stops the server from starting
    for (name, value) in [
        ("--bf.error-rate", "2"),
        ("--bf.initial-size", "0"),
        ("--bf.max-filter-bytes", "10"),
    ] {
        let r = Server::try_with_args(&[], &[name, value]);
        assert!(r.is_err(), "{name} {value} started");
    }
    let log = Server::try_with_args(&[], &["--bf.error-rate", "2"])
        .err()
        .unwrap();
    assert!(
        log.contains("bf.error-rate must be a number between 0 and 1, exclusive"),
        "{log}"
    );
}

#[test]
fn config_set_max_filter_bytes() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(config_set(&mut c, "bf.max-filter-bytes", "100000"), ok());
    assert_eq!(config_get(&mut c, "bf.max-filter-bytes"), "100000");
    let r = run(&mut c, &["BF.RESERVE", "big", "0.01", "1000000"]);
    let text = r.err_text();
    assert!(
        text.starts_with("ERR ")
            && text.contains("limit of 100000 bytes")
            && text.contains("bf.max-filter-bytes"),
        "{text:?}"
    );
    assert_eq!(run(&mut c, &["TYPE", "big"]), Reply::Status("none".into()));
    // raising it again lets the same reservation through
    assert_eq!(config_set(&mut c, "bf.max-filter-bytes", "2000000"), ok());
    assert_eq!(run(&mut c, &["BF.RESERVE", "big", "0.01", "1000000"]), ok());
}

#[test]
fn info_section_counts() {
    let s = Server::new();
    let mut c = s.conn();
    expect_stats(&s, &mut c, [0, 0, 0, 0, 0, 0]);

    // two filters, with fixed seeds so that the replies are deterministic
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "a", "0.01", "100", "SEED", "1"]),
        ok()
    );
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "ns", "0.01", "2", "NONSCALING", "SEED", "2"]
        ),
        ok()
    );
    let its: Vec<String> = (0..250).map(|i| format!("item-{i}")).collect();
    let mut args = vec!["BF.MADD", "a"];
    args.extend(its.iter().map(String::as_str));
    let added = match run(&mut c, &args) {
        Reply::Arr(v) => v.iter().filter(|r| **r == int(1)).count() as u64,
        other => panic!("{other:?}"),
    };
    assert!(added > 240, "{added}");
    // the 250 items outgrew the first link
    assert!(debug_lines(&mut c, "a").len() > 2);
    // present again: not an add
    assert_eq!(run(&mut c, &["BF.ADD", "a", "item-0"]), int(0));
    assert_eq!(run(&mut c, &["BF.MADD", "ns", "p", "q"]), ints(&[1, 1]));
    // full: refused, and the rest of the MADD is not tried
    assert_eq!(
        run(&mut c, &["BF.MADD", "ns", "r", "s"]),
        arr(vec![err(texts::FULL)])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "ns", "t"]), err(texts::FULL));
    let adds = added + 2;

    assert_eq!(run(&mut c, &["BF.EXISTS", "a", "item-1"]), int(1));
    assert!(
        matches!(run(&mut c, &["BF.MEXISTS", "ns", "p", "q", "zz"]), Reply::Arr(v) if v.len() == 3)
    );
    assert_eq!(run(&mut c, &["BF.EXISTS", "missing", "x"]), int(0));
    let checks = 1 + 3 + 1;

    let bytes = debug_bytes(&mut c, "a") + debug_bytes(&mut c, "ns");
    expect_stats(&s, &mut c, [2, bytes, adds, adds, checks, 2]);
    assert_eq!(stat(&mut c, "items"), {
        let card = |c: &mut redis::Connection, k: &str| match run(c, &["BF.CARD", k]) {
            Reply::Int(n) => n as u64,
            other => panic!("{other:?}"),
        };
        card(&mut c, "a") + card(&mut c, "ns")
    });

    // COPY adds a filter, DEL removes it
    assert_eq!(run(&mut c, &["COPY", "a", "b"]), int(1));
    let a_bytes = debug_bytes(&mut c, "a");
    let a_items = added;
    let copied = [3, bytes + a_bytes, adds + a_items, adds, checks, 2];
    expect_stats(&s, &mut c, copied);
    assert_eq!(run(&mut c, &["DEL", "b"]), int(1));
    expect_stats(&s, &mut c, [2, bytes, adds, adds, checks, 2]);

    // DEBUG RELOAD: freed and loaded again, counts unchanged
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    expect_stats(&s, &mut c, [2, bytes, adds, adds, checks, 2]);

    // DEL of one filter
    assert_eq!(run(&mut c, &["DEL", "ns"]), int(1));
    expect_stats(&s, &mut c, [1, a_bytes, a_items, adds, checks, 2]);

    // SCANDUMP into a new key through LOADCHUNK counts the new filter
    let mut it = 0i64;
    let mut chunks = Vec::new();
    loop {
        match run(&mut c, &["BF.SCANDUMP", "a", &it.to_string()]) {
            Reply::Arr(v) => match (&v[0], &v[1]) {
                (Reply::Int(0), _) => break,
                (Reply::Int(n), Reply::Bulk(d)) => {
                    it = *n;
                    chunks.push((n.to_string(), d.clone()));
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }
    for (it, data) in &chunks {
        let args: [&[u8]; 4] = [b"BF.LOADCHUNK", b"restored", it.as_bytes(), data];
        assert_eq!(run(&mut c, &args), ok());
    }
    expect_stats(&s, &mut c, [2, 2 * a_bytes, 2 * a_items, adds, checks, 2]);

    // FLUSHALL frees everything; the counters stay
    assert_eq!(run(&mut c, &["FLUSHALL"]), ok());
    expect_stats(&s, &mut c, [0, 0, 0, adds, checks, 2]);
}

#[test]
fn info_counts_memory_limit_refusals() {
    let s = Server::with_args(&["MAX_FILTER_BYTES", "100000"], &[]);
    let mut c = s.conn();
    // an implicit creation over the limit refuses every item
    assert_eq!(config_set(&mut c, "bf.initial-size", "1000000"), ok());
    assert!(run(&mut c, &["BF.MADD", "k", "a", "b"]).is_err());
    assert_eq!(stat(&mut c, "refusals"), 2);
    assert_eq!(stat(&mut c, "filters"), 0);
    // a growth step over the limit refuses the item that needed it
    assert_eq!(config_set(&mut c, "bf.initial-size", "5000"), ok());
    let its: Vec<String> = (0..60_000).map(|i| format!("g-{i}")).collect();
    let mut refused = 0;
    for chunk in its.chunks(1000) {
        let mut args = vec!["BF.MADD", "g"];
        args.extend(chunk.iter().map(String::as_str));
        match run(&mut c, &args) {
            Reply::Arr(v) => refused += v.iter().filter(|r| r.is_err()).count() as u64,
            other => panic!("{other:?}"),
        }
    }
    assert!(refused > 0);
    assert_eq!(stat(&mut c, "refusals"), 2 + refused);
    assert_eq!(stat(&mut c, "bytes"), debug_bytes(&mut c, "g"));
}

#[test]
fn module_load_arguments_change_the_defaults() {
    let s = Server::with_args(&["INITIAL_SIZE", "1000", "ERROR_RATE", "0.001"], &[]);
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "k1", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.RESERVE", "k2", "0.001", "1000"]), ok());
    assert_eq!(run(&mut c, &["BF.RESERVE", "k3", "0.01", "100"]), ok());
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
    assert!(memory_usage(&mut c, "k1") > memory_usage(&mut c, "k3"));
    // 1000 items fit in the first link
    let its = items("i", 999);
    madd(&mut c, "k1", &its);
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
}

#[test]
fn per_filter_memory_limit_module_argument() {
    let s = Server::with_args(&["MAX_FILTER_BYTES", "100000"], &[]);
    let mut c = s.conn();
    // ~1.38 MB > 100000 bytes
    let r = run(&mut c, &["BF.RESERVE", "big", "0.01", "1000000"]);
    assert!(r.is_err(), "{r:?}");
    let text = r.err_text();
    assert!(
        text.starts_with("ERR ") && text.contains("limit") && text.contains("100000"),
        "{text:?}"
    );
    assert_eq!(run(&mut c, &["TYPE", "big"]), Reply::Status("none".into()));
    // ~13.8 KB is fine, and the chain grows until a link would pass the limit
    assert_eq!(run(&mut c, &["BF.RESERVE", "g", "0.01", "10000"]), ok());
    let its = items("g-", 60_000);
    let replies = pipeline(
        &mut c,
        &its.iter()
            .map(|i| vec!["BF.ADD", "g", i.as_str()])
            .collect::<Vec<_>>(),
    );
    let first_err = replies
        .iter()
        .position(|r| r.is_err())
        .expect("the chain must stop growing at the limit");
    assert!(first_err >= 9_500, "refused too early, at add {first_err}");
    let text = replies[first_err].err_text();
    assert!(
        text.starts_with("ERR ") && text.contains("limit"),
        "{text:?}"
    );
    assert!(replies[..first_err]
        .iter()
        .all(|r| *r == int(0) || *r == int(1)));
    let ex = exists_all(&mut c, "g", &its[..first_err]);
    assert!(
        ex.iter().all(|r| *r == int(1)),
        "an added item reads absent"
    );
    let m = memory_usage(&mut c, "g");
    assert!(m < 150_000, "MEMORY USAGE {m} with a 100000-byte limit");
}

#[test]
fn module_arguments_apply_to_implicit_creation() {
    // EXPANSION 0 makes implicitly created filters NONSCALING
    let s = Server::with_args(
        &[
            "INITIAL_SIZE",
            "3",
            "ERROR_RATE",
            "0.000001",
            "EXPANSION",
            "0",
        ],
        &[],
    );
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.MADD", "k", "a", "b", "c", "d", "e"]),
        arr(vec![int(1), int(1), int(1), err(texts::FULL)])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "k2", "a"]), int(1));
    assert_eq!(run(&mut c, &["BF.MADD", "k2", "b", "c"]), ints(&[1, 1]));
    assert_eq!(run(&mut c, &["BF.ADD", "k2", "d"]), err(texts::FULL));
    // BF.RESERVE without EXPANSION takes the default expansion too (as RedisBloom 8.x does
    // with bf-expansion-factor 0) ...
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.000001", "3"]), ok());
    assert_eq!(
        run(&mut c, &["BF.MADD", "r", "a", "b", "c", "d", "e"]),
        arr(vec![int(1), int(1), int(1), err(texts::FULL)])
    );
    // ... but an explicit EXPANSION still scales (unlike 8.x, which refuses it)
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "r2", "0.000001", "3", "EXPANSION", "2"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "r2", "a", "b", "c", "d", "e"]),
        ints(&[1, 1, 1, 1, 1])
    );
    drop(c);
    drop(s);

    // a default that does not fit under the limit refuses implicit creation
    let s = Server::with_args(
        &["INITIAL_SIZE", "1000000", "MAX_FILTER_BYTES", "100000"],
        &[],
    );
    let mut c = s.conn();
    let r = run(&mut c, &["BF.ADD", "k", "a"]);
    assert!(
        r.is_err() && r.err_text().starts_with("ERR ") && r.err_text().contains("limit"),
        "{r:?}"
    );
    let r = run(&mut c, &["BF.MADD", "k", "a", "b"]);
    assert!(r.is_err() && r.err_text().contains("limit"), "{r:?}");
    assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
}

#[test]
fn bad_module_arguments_fail_the_load() {
    for args in [
        &["ERROR_RATE", "0"][..],
        &["ERROR_RATE", "1"][..],
        &["ERROR_RATE", "abc"][..],
        &["INITIAL_SIZE", "0"][..],
        &["INITIAL_SIZE", "1.5"][..],
        &["NO_SUCH_OPTION", "1"][..],
        &["ERROR_RATE"][..],
    ] {
        match Server::try_with_args(args, &[]) {
            Ok(_) => panic!("module loaded with bad arguments {args:?}"),
            Err(log) => assert!(log.contains("exited"), "{args:?}: {log}"),
        }
    }
    // lower-case names are accepted (case-insensitive)
    let s = Server::with_args(&["initial_size", "1000"], &[]);
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "k1", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.RESERVE", "k2", "0.01", "1000"]), ok());
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
}

/// CONFIG REWRITE writes the bf.* configs into the config file, which a restart reads back: the
/// same on every server (Valkey orders the lines differently), and the module's `loadmodule`
/// line stays one line.
#[test]
fn config_rewrite_keeps_the_bf_configs_across_a_restart() {
    let mut s = Server::with_config_file("bf.expansion 4");
    let mut c = s.conn();
    assert_eq!(config_set(&mut c, "bf.error-rate", "0.001"), ok());
    assert_eq!(config_set(&mut c, "bf.max-filter-bytes", "1mb"), ok());
    assert_eq!(config_set(&mut c, "bf.expandable", "yes"), ok());
    assert_eq!(run(&mut c, &["CONFIG", "REWRITE"]), ok());
    let file = std::fs::read_to_string(s.dir.join("redis.conf")).unwrap();
    let lines: Vec<&str> = file
        .lines()
        .filter(|l| l.starts_with("bf.") || l.starts_with("loadmodule"))
        // valkey-bloom's names of the same settings are written too (see below).
        .filter(|l| !l.starts_with("bf.bloom-"))
        .collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(
        sorted[..4],
        [
            "bf.error-rate \"0.001\"",
            "bf.expandable yes",
            "bf.expansion 4",
            "bf.max-filter-bytes 1mb"
        ],
        "{file}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("loadmodule")).count(),
        1,
        "{file}"
    );
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.001", "100", "4", "1048576"])
    );
    // bf.expandable survives too, and new filters an add creates grow.
    assert_eq!(config_get(&mut c, "bf.expandable"), "yes");
    assert_eq!(run(&mut c, &["BF.ADD", "grows", "a"]), int(1));
    assert!(debug_lines(&mut c, "grows")[1].starts_with("layout:expandable"));
}

/// RedisBloom 8's config names, without the module's prefix, where the server takes unprefixed
/// module configs (Redis 8): its defaults, its ranges, CONFIG SET changing new filters, and
/// the cuckoo filters' defaults. Elsewhere they are unknown, and the load line says so.
#[test]
fn redisbloom_8_config_names_where_the_server_takes_them() {
    let s = Server::new();
    let mut c = s.conn();
    let names = [
        ("bf-error-rate", "0.01"),
        ("bf-initial-size", "100"),
        ("bf-expansion-factor", "2"),
        ("cf-bucket-size", "2"),
        ("cf-initial-size", "1024"),
        ("cf-max-iterations", "20"),
        ("cf-expansion-factor", "1"),
        ("cf-max-expansions", "32"),
    ];
    if flavor() != Flavor::Redis80 {
        for (name, _) in names {
            assert!(config_set(&mut c, name, "2").is_err(), "{name}");
        }
        assert!(s.log().contains("unprefixed configs no"), "{}", s.log());
        return;
    }
    assert!(s.log().contains("unprefixed configs yes"), "{}", s.log());
    for (name, default) in names {
        assert_eq!(config_get(&mut c, name), default, "{name}");
    }
    // Other names of rsbloom's own settings.
    assert_eq!(config_set(&mut c, "bf-error-rate", "0.02"), ok());
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.02");
    assert_eq!(run(&mut c, &["BF.ADD", "b", "x"]), int(1));
    // The first link of a scaling chain has half the rate.
    assert_eq!(first_link_field(&mut c, "b", "ratio"), "0.01");
    assert_eq!(config_set(&mut c, "bf-expansion-factor", "4"), ok());
    assert_eq!(config_get(&mut c, "bf.expansion"), "4");
    assert!(config_set(&mut c, "bf-initial-size", "1048577").is_err());
    assert!(config_set(&mut c, "cf-bucket-size", "256").is_err());
    // The cuckoo filters' defaults.
    for (name, value) in [
        ("cf-initial-size", "4096"),
        ("cf-bucket-size", "4"),
        ("cf-max-iterations", "50"),
        ("cf-expansion-factor", "2"),
    ] {
        assert_eq!(config_set(&mut c, name, value), ok(), "{name}");
    }
    assert_eq!(run(&mut c, &["CF.ADD", "c", "x"]), int(1));
    assert_eq!(run(&mut c, &["CF.RESERVE", "r", "1000"]), ok());
    for key in ["c", "r"] {
        let Reply::Arr(info) = run(&mut c, &["CF.INFO", key]) else {
            panic!("CF.INFO {key}")
        };
        let field = |name: &str| {
            let at = info
                .iter()
                .position(|f| *f == bulk(name) || *f == status(name))
                .unwrap_or_else(|| panic!("no {name} in {info:?}"));
            info[at + 1].clone()
        };
        let buckets = if key == "c" { 1024 } else { 256 };
        assert_eq!(field("Number of buckets"), int(buckets), "{key}");
        assert_eq!(field("Bucket size"), int(4), "{key}");
        assert_eq!(field("Expansion rate"), int(2), "{key}");
        assert_eq!(field("Max iterations"), int(50), "{key}");
    }
}

/// A Redis 8 `redis.conf` with RedisBloom 8's lines starts a server whose filters use them, and
/// CONFIG REWRITE keeps them across a restart.
#[test]
fn redisbloom_8_config_lines_start_a_server_and_survive_a_rewrite() {
    if flavor() != Flavor::Redis80 {
        return;
    }
    let mut s = Server::with_config_file("bf-error-rate 0.002\ncf-bucket-size 4");
    let mut c = s.conn();
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.002");
    assert_eq!(run(&mut c, &["BF.ADD", "b", "x"]), int(1));
    assert_eq!(first_link_field(&mut c, "b", "ratio"), "0.001");
    assert_eq!(config_set(&mut c, "cf-max-iterations", "30"), ok());
    assert_eq!(run(&mut c, &["CONFIG", "REWRITE"]), ok());
    let file = std::fs::read_to_string(s.dir.join("redis.conf")).unwrap();
    assert!(file.lines().any(|l| l == "cf-max-iterations 30"), "{file}");
    assert!(file.lines().any(|l| l == "cf-bucket-size 4"), "{file}");
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(config_get(&mut c, "cf-max-iterations"), "30");
    assert_eq!(config_get(&mut c, "cf-bucket-size"), "4");
    assert_eq!(config_get(&mut c, "bf-error-rate"), "0.002");
}

/// A valkey-bloom user's config lines start the server on every server (module `bf` there
/// too): four of them name rsbloom's settings, three are kept and change nothing, all are
/// hidden from `CONFIG GET bf.*`, and CONFIG REWRITE writes every name of a changed setting,
/// which the next start reads back to the same values.
#[test]
fn valkey_bloom_config_names_start_the_server() {
    let mut s = Server::with_config_file(
        "bf.bloom-capacity 500\nbf.bloom-fp-rate 0.001\nbf.bloom-expansion 4\n\
         bf.bloom-memory-usage-limit 1000000\nbf.bloom-tightening-ratio 0.9\n\
         bf.bloom-use-random-seed no\nbf.bloom-defrag-enabled no",
    );
    let mut c = s.conn();
    assert_eq!(
        all_configs(&mut c),
        strings(["0.001", "500", "4", "1000000"])
    );
    for (name, value) in [
        ("bf.bloom-capacity", "500"),
        ("bf.bloom-fp-rate", "0.001"),
        ("bf.bloom-expansion", "4"),
        ("bf.bloom-memory-usage-limit", "1000000"),
        ("bf.bloom-tightening-ratio", "0.9"),
        ("bf.bloom-use-random-seed", "no"),
        ("bf.bloom-defrag-enabled", "no"),
    ] {
        assert_eq!(config_get(&mut c, name), value, "{name}");
    }
    // New filters are rsbloom's, with the settings the names gave.
    assert_eq!(run(&mut c, &["BF.ADD", "b", "x"]), int(1));
    assert_eq!(run(&mut c, &["TYPE", "b"]), status("MBbloom--"));
    assert_eq!(capacity(&mut c, "b"), int(500));
    assert_eq!(expansion(&mut c, "b"), int(4));
    // CONFIG SET by either name changes the one setting; valkey-bloom's ranges hold.
    assert_eq!(config_set(&mut c, "bf.bloom-capacity", "700"), ok());
    assert_eq!(config_get(&mut c, "bf.initial-size"), "700");
    assert!(config_set(&mut c, "bf.bloom-expansion", "0").is_err());
    assert!(config_set(&mut c, "bf.bloom-tightening-ratio", "1").is_err());
    assert!(config_set(&mut c, "bf.bloom-fp-rate", "0").is_err());
    let Reply::Arr(listed) = run(&mut c, &["CONFIG", "GET", "bf.*"]) else {
        panic!("CONFIG GET bf.*")
    };
    assert!(
        !listed
            .iter()
            .any(|r| matches!(r, Reply::Bulk(b) if b.starts_with(b"bf.bloom-"))),
        "{listed:?}"
    );
    assert_eq!(run(&mut c, &["CONFIG", "REWRITE"]), ok());
    let file = std::fs::read_to_string(s.dir.join("redis.conf")).unwrap();
    assert!(file.lines().any(|l| l == "bf.initial-size 700"), "{file}");
    assert!(file.lines().any(|l| l == "bf.bloom-capacity 700"), "{file}");
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(config_get(&mut c, "bf.bloom-capacity"), "700");
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.001");
}

/// One rule for two names of a setting, what CONFIG REWRITE writes, and an operator's edit after
/// it: a rewrite writes the documented names (and the other names a user used), never an
/// unused valkey-bloom name; an edit of a documented name in the file takes effect at the next
/// start, even beside another name of the same setting, in either order; a name that was used
/// reads the setting.
#[test]
fn config_rewrite_writes_documented_names_and_the_documented_name_wins() {
    let mut s = Server::with_config_file("");
    let mut c = s.conn();
    assert_eq!(config_set(&mut c, "bf.error-rate", "0.02"), ok());
    assert_eq!(config_set(&mut c, "bf.initial-size", "500"), ok());
    assert_eq!(config_set(&mut c, "bf.expansion", "4"), ok());
    // Never used, the other names read their defaults, so the rewrite leaves them out.
    assert_eq!(config_get(&mut c, "bf.bloom-capacity"), "100");
    assert_eq!(run(&mut c, &["CONFIG", "REWRITE"]), ok());
    let conf = s.dir.join("redis.conf");
    // (String configs' values are written quoted.)
    let file = std::fs::read_to_string(&conf).unwrap().replace('"', "");
    for line in [
        "bf.error-rate 0.02",
        "bf.initial-size 500",
        "bf.expansion 4",
    ] {
        assert!(file.lines().any(|l| l == line), "{line}: {file}");
    }
    assert!(!file.contains("bf.bloom-"), "{file}");
    assert!(!file.contains("bf-"), "{file}");
    // The operator edits the documented names in the file: they take effect.
    let edited = file
        .replace("bf.error-rate 0.02", "bf.error-rate 0.005")
        .replace("bf.initial-size 500", "bf.initial-size 800");
    std::fs::write(&conf, &edited).unwrap();
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(config_get(&mut c, "bf.error-rate"), "0.005");
    assert_eq!(config_get(&mut c, "bf.initial-size"), "800");
    // Another name in the file beside the documented one, before or after it: the documented
    // name wins either way; alone, the other name sets the value.
    for lines in [
        "bf.bloom-capacity 300\nbf.initial-size 400\nbf.bloom-fp-rate 0.3\nbf.error-rate 0.04",
        "bf.initial-size 400\nbf.bloom-capacity 300\nbf.error-rate 0.04\nbf.bloom-fp-rate 0.3",
    ] {
        std::fs::write(&conf, format!("{edited}\n{lines}\n")).unwrap();
        drop(c);
        s.restart();
        c = s.conn();
        assert_eq!(config_get(&mut c, "bf.initial-size"), "400", "{lines}");
        assert_eq!(config_get(&mut c, "bf.error-rate"), "0.04", "{lines}");
        // Used in the file, the other name reads the setting.
        assert_eq!(config_get(&mut c, "bf.bloom-capacity"), "400", "{lines}");
        assert_eq!(config_get(&mut c, "bf.bloom-fp-rate"), "0.04", "{lines}");
    }
    std::fs::write(
        &conf,
        format!(
            "{}\nbf.bloom-capacity 300\n",
            edited.replace("bf.initial-size 800", "")
        ),
    )
    .unwrap();
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(config_get(&mut c, "bf.initial-size"), "300");
    // By CONFIG SET, the latest set wins, by either name.
    assert_eq!(config_set(&mut c, "bf.initial-size", "600"), ok());
    assert_eq!(config_get(&mut c, "bf.bloom-capacity"), "600");
    assert_eq!(config_set(&mut c, "bf.bloom-capacity", "650"), ok());
    assert_eq!(config_get(&mut c, "bf.initial-size"), "650");
}

/// The probe for Redis 8's unprefixed config names makes Redis 7 and Valkey 8 log a warning:
/// the load line says what it is.
#[test]
fn the_load_line_explains_the_probes_warning() {
    let s = Server::new();
    let log = s.log();
    let warned = log.contains("Invalid flag(s) for configuration");
    if matches!(flavor(), Flavor::Redis70 | Flavor::Valkey81) {
        assert!(warned, "{log}");
    }
    assert_eq!(
        warned,
        log.contains("is rsbloom's probe for them, and harmless"),
        "{log}"
    );
}
