//! Writes valid seed inputs for the fuzz targets into `<dir>/<target>/` (default
//! `target/seeds`): real argument lists, the SCANDUMP streams (header and chunks, as
//! BF.SCANDUMP returns them) and the RDB field streams of filters of every kind: scaling,
//! NONSCALING, RedisBloom-layout and migrated from RedisBloom; the cuckoo target's streams,
//! values and arguments; and the valkey target's values, blobs and arguments.
//!
//! `cargo run --example seeds -- [dir]` from `fuzz/`; `make fuzz` runs it.

use std::borrow::Cow;
use std::fs;
use std::path::Path;

use rsbloom_core::bloom::redisbloom_rdb;
use rsbloom_core::codec::{Field, FieldSlice, FieldWriter};
use rsbloom_core::cuckoo::{rdb as cuckoo_rdb, scandump as cuckoo_scandump};
use rsbloom_core::growing::lines::LineFilter;
use rsbloom_core::sizing::{self, REDISBLOOM_LN2};
use rsbloom_core::valkey;
use rsbloom_core::window::rotating::Rotating;
use rsbloom_core::{
    rdb, scandump, Chain, Filter, FilterSpec, Growing, Growth, Sliding, ValkeyBloom, ValkeySpec,
    Window,
};
use rsbloom_core::{Cuckoo, CuckooSpec};
use rsbloom_fuzz::{decode_dump, decode_rdb, encode_dump, encode_rdb, fields_of, CHUNKS_LIMIT};

const ARGS: &[&str] = &[
    "0.01\n100",
    "0.001\n1000000\nEXPANSION\n4",
    "0.01\n100\nNONSCALING",
    "0.5\n7\nSEED\n18446744073709551615\nexpansion\n1",
    "1e-3\n9223372036854775807\nnonscaling\nSEED\n0",
    "0.01\n100\nEXPANSION",
    "0.01\n100\nEXPANSION\n2\nNONSCALING",
    "0.01\n100\nEXPANSION\n4294967296",
    "1e-310\n1\nSEED\n-1",
    "-0\n+5\n0100\ninf\n-Infinity\nnan\n1e-400\n1e400\n0x1p-3\n-9223372036854775808\n 1",
    // BF.INSERT's options (the target also reads each input as INSERT's arguments) and the
    // module load arguments.
    "CAPACITY\n100\nERROR\n0.01\nEXPANSION\n4\nITEMS\na\nb",
    "NOCREATE\nNONSCALING\nITEMS\nx",
    "c\n7\ne\n0.5\nn\ni\nITEMS",
    "ERROR_RATE\n0.001\nINITIAL_SIZE\n1000\nEXPANSION\n0\nMAX_FILTER_BYTES\n64",
    // Window options.
    "0.01\n1000\nSLIDING\nSEED\n5",
    "0.001\n100\nWINDOW\n3600\nEXPANSION\n3",
    "0.01\n100\nWINDOW\n60\nNONSCALING\nSLIDING",
    "CAPACITY\n50\nWINDOW\n5\nAT\n1700000000000\nITEMS\na",
    "SLIDING\nNOCREATE\nAT\n18446744073709551615\nITEMS\nb",
];

/// Bits per entry as RedisBloom stores it (`|ln(error)| / ln(2)^2`).
fn bpe(error: f64) -> f64 {
    (error.ln() / (REDISBLOOM_LN2 * REDISBLOOM_LN2)).abs()
}

/// A growing filter of `error` starting at `capacity`, holding `items` (several splits).
fn growing(error: f64, capacity: u64, items: u32) -> Growing {
    let mut g = Growing::new(error, capacity, 0x6772, u64::MAX).expect("a seed filter");
    for i in 0..items {
        let _ = g.add(format!("seed-{i}").as_bytes(), u64::MAX);
    }
    g
}

fn native(capacity: u64, nonscaling: bool, items: u32) -> Chain {
    let spec = FilterSpec {
        error: 0.01,
        capacity,
        growth: if nonscaling {
            Growth::Fixed
        } else {
            Growth::Scaling(2)
        },
        window: Window::Unbounded,
        refresh: true,
    };
    let mut chain = Chain::new(&spec, 0x7365_6564, u64::MAX).expect("seed chain");
    for i in 0..items {
        let _ = chain.add(format!("seed-{i}").as_bytes(), u64::MAX);
    }
    chain
}

/// A window filter with items added over `minutes` (a time window) or past its capacity.
fn window(window: Window, growth: Growth, items: u32) -> Sliding {
    let spec = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth,
        window,
        refresh: true,
    };
    let mut f = Sliding::new(&spec, 0x7769_6e64, u64::MAX).expect("seed window");
    for i in 0..items {
        let now = 1_700_000_000_000 + u64::from(i) * 97;
        let _ = f.add(format!("seed-{i}").as_bytes(), now, u64::MAX, true);
    }
    f
}

/// A window filter of the rotating layout, fed as [`window`] feeds one of the first layout
/// (and past its capacity within a window: a burst with extras, when it grows).
fn rotating(window: Window, growth: Growth, items: u32) -> Rotating {
    let spec = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth,
        window,
        refresh: true,
    };
    let mut f = Rotating::new(&spec, 0x726f_7461, u64::MAX).expect("seed window");
    for i in 0..items {
        let now = 1_700_000_000_000 + u64::from(i) * 3;
        let _ = f.add(format!("seed-{i}").as_bytes(), now, u64::MAX, true);
    }
    f
}

/// RedisBloom's RDB value of encoding `encver` for links `(capacity, error, bits, items)`
/// (bits zero); `items` is each link's item count.
fn redisbloom_value(encver: i32, options: u64, links: &[(u64, f64, u64, u64)]) -> Vec<Field> {
    let mut w: Vec<Field> = Vec::new();
    w.unsigned(links.iter().map(|l| l.3).sum());
    w.unsigned(links.len() as u64);
    if encver >= 2 {
        w.unsigned(options);
    }
    if encver >= 4 {
        w.unsigned(2);
    }
    for &(capacity, error, bits, items) in links {
        let bpe = bpe(error);
        w.unsigned(capacity);
        w.double(error);
        w.unsigned((REDISBLOOM_LN2 * bpe).ceil() as u64);
        w.double(bpe);
        if encver >= 1 {
            w.unsigned(bits);
            w.unsigned(0);
        }
        w.bytes(&vec![0; (bits / 8) as usize]);
        w.unsigned(items);
    }
    w
}

/// RedisBloom-sized links for capacities 100, 200 at 0.005, 0.0025.
fn redisbloom_links() -> Vec<(u64, f64, u64, u64)> {
    [(100, 0.005), (200, 0.0025)]
        .iter()
        .map(|&(c, e)| (c, e, sizing::redisbloom(c, e).expect("size").bits, 0))
        .collect()
}

/// A chain loaded from a RedisBloom value, then filled (and grown) through rsbloom.
fn migrated(items: u32) -> Chain {
    let value = redisbloom_value(4, 5, &redisbloom_links());
    let mut chain = redisbloom_rdb::decode(&mut FieldSlice(&value), 4, 0x5eed).expect("rb value");
    // (a RedisBloom value is always a chain)
    for i in 0..items {
        let _ = chain.add(format!("migrated-{i}").as_bytes(), u64::MAX);
    }
    chain
}

/// SCANDUMP's header of a RedisBloom filter: its layout without rsbloom's trailer.
fn redisbloom_header(chain: &Chain) -> Vec<u8> {
    let mut h = scandump::header(&Filter::Chain(chain.clone()));
    h.truncate(h.len() - 8 - chain.links().len());
    let options =
        u32::from_le_bytes(h[12..16].try_into().unwrap()) & !scandump::options::OPT_RSBLOOM;
    h[12..16].copy_from_slice(&options.to_le_bytes());
    for (i, link) in chain.links().iter().enumerate() {
        let at = 20 + 53 * i + 32; // the link's bpe
        h[at..at + 8].copy_from_slice(&bpe(link.error).to_le_bytes());
    }
    h
}

/// A one-line growing filter of `error` from 100 items, holding `items`.
fn lines(error: f64, items: u64) -> LineFilter {
    let mut f = LineFilter::new(error, 100, 7, u64::MAX).expect("a filter");
    for i in 0..items {
        f.add(format!("item-{i}").as_bytes(), u64::MAX)
            .expect("an add");
    }
    f
}

/// One-line growing filters (`lines`): the item count, then the filter's fields.
fn lines_seeds(out: &Path) {
    for (name, error, items) in [
        ("lines", 0.01, 3_000u64),
        ("lines-tight", 0.001, 20_000),
        ("lines-empty", 0.01, 0),
    ] {
        let f = lines(error, items);
        let mut fields = vec![Field::Unsigned(f.items())];
        f.encode(&mut fields);
        write(out, "lines", name, &encode_rdb(0, &fields));
    }
}

/// Writes one seed, after checking that it decodes: a seed the decoder refuses would only
/// exercise its first check.
fn write(dir: &Path, target: &str, name: &str, data: &[u8]) {
    match target {
        "chunks" => {
            let (header, chunks) = decode_dump(data).expect("dump seed");
            let mut filter = scandump::filter_from_header(header, 1, CHUNKS_LIMIT)
                .unwrap_or_else(|e| panic!("{name}: header refused: {e:?}"));
            for (next, chunk) in chunks {
                scandump::load_chunk(&mut filter, next, chunk).expect("seed chunk");
            }
        }
        "rdb" => {
            let (encver, fields) = decode_rdb(data).expect("rdb seed");
            let encver = i32::from(encver);
            let decoded = if encver == rdb::ENCODING_VERSION {
                rdb::decode(&mut FieldSlice(&fields))
            } else {
                redisbloom_rdb::decode(&mut FieldSlice(&fields), encver, 1).map(Filter::Chain)
            };
            decoded.unwrap_or_else(|e| panic!("{name}: value refused: {e:?}"));
        }
        "lines" => {
            let (_, fields) = decode_rdb(data).expect("lines seed");
            let Some((Field::Unsigned(items), fields)) = fields.split_first() else {
                panic!("{name}: no item count")
            };
            LineFilter::decode(&mut FieldSlice(fields), *items)
                .unwrap_or_else(|e| panic!("{name}: value refused: {e:?}"));
        }
        _ => {}
    }
    let dir = dir.join(target);
    fs::create_dir_all(&dir).expect("create seed dir");
    fs::write(dir.join(name), data).expect("write seed");
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/seeds".into());
    let out = Path::new(&out);
    for (i, args) in ARGS.iter().enumerate() {
        write(out, "args", &format!("args-{i}"), args.as_bytes());
    }
    bulk_seeds(out);
    lines_seeds(out);
    let filters = [
        ("scaling", Filter::Chain(native(50, false, 400))),
        ("nonscaling", Filter::Chain(native(100, true, 60))),
        ("empty", Filter::Chain(native(1, false, 0))),
        ("migrated", Filter::Chain(migrated(500))),
        (
            "sliding",
            Filter::from(window(Window::Count, Growth::Fixed, 300)),
        ),
        (
            "window",
            Filter::from(window(Window::Time { seconds: 1 }, Growth::Scaling(2), 200)),
        ),
        (
            "window-empty",
            Filter::from(window(Window::Time { seconds: 60 }, Growth::Fixed, 0)),
        ),
        (
            "rotating-count",
            Filter::from(rotating(Window::Count, Growth::Fixed, 300)),
        ),
        (
            "rotating-burst",
            Filter::from(rotating(
                Window::Time { seconds: 1 },
                Growth::Scaling(2),
                600,
            )),
        ),
        ("growing", Filter::from(growing(0.01, 100, 2_000))),
        ("growing-reserved", Filter::from(growing(0.001, 5_000, 300))),
        ("growing-empty", Filter::from(growing(0.01, 1, 0))),
        ("lines", Filter::from(lines(0.01, 3_000))),
        ("lines-tight", Filter::from(lines(0.001, 20_000))),
    ];
    for (name, chain) in &filters {
        let chunks: Vec<(i64, Cow<[u8]>)> = scandump::chunks(chain).collect();
        let chunks: Vec<(i64, &[u8])> = chunks.iter().map(|(n, c)| (*n, &c[..])).collect();
        write(
            out,
            "chunks",
            name,
            &encode_dump(&scandump::header(chain), &chunks),
        );
        write(out, "rdb", name, &encode_rdb(100, &fields_of(chain)));
    }
    // RedisBloom's own SCANDUMP of a filter with some items (its first link only).
    let rb = migrated(80);
    let rb_filter = Filter::Chain(rb.clone());
    let chunks: Vec<(i64, Cow<[u8]>)> = scandump::chunks(&rb_filter).collect();
    let chunks: Vec<(i64, &[u8])> = chunks.iter().map(|(n, c)| (*n, &c[..])).collect();
    write(
        out,
        "chunks",
        "redisbloom",
        &encode_dump(&redisbloom_header(&rb), &chunks),
    );
    // RedisBloom's RDB encodings 1 to 4, 64-bit and legacy 32-bit, scaling and NONSCALING.
    for (encver, options) in [(4, 5), (4, 13), (3, 5), (2, 1), (1, 0)] {
        let value = redisbloom_value(encver, options, &redisbloom_links());
        let name = format!("redisbloom-enc{encver}-opt{options}");
        write(out, "rdb", &name, &encode_rdb(encver as u8, &value));
    }
    // Encoding 0 derives the bits from capacity * bpe, which must land on whole words.
    let capacity = (1000u64..)
        .find(|&c| ((c as f64 * bpe(0.01)) as u64).is_multiple_of(64))
        .expect("a capacity on whole words");
    let bits = (capacity as f64 * bpe(0.01)) as u64;
    let value = redisbloom_value(0, 0, &[(capacity, 0.01, bits, 0)]);
    write(out, "rdb", "redisbloom-enc0", &encode_rdb(0, &value));
    cuckoo_seeds(out);
    valkey_seeds(out);
    println!("seeds written to {}", out.display());
}

/// The valkey target's seeds (first byte: 0 RDB value, 1 `BF.LOAD` blob, 2 arguments), and a
/// valkey-bloom filter's SCANDUMP stream for the chunks target: filters grown over several
/// sub-filters, NONSCALING, with the fixed seed, and the replayed creation's arguments.
fn valkey_seeds(out: &Path) {
    let spec = |capacity, expansion, seed| ValkeySpec {
        capacity,
        error: 0.01,
        tightening: 0.5,
        expansion,
        seed,
    };
    let filters = [
        ("scaling", spec(20, 2, [3; 32]), 150),
        ("nonscaling", spec(50, 0, [9; 32]), 49),
        ("fixed-seed", spec(10, 4, valkey::FIXED_SEED), 60),
        ("empty", spec(1, 1, [0; 32]), 0),
    ];
    for (name, spec, items) in filters {
        let mut v = ValkeyBloom::new(&spec, u64::MAX).expect("a seed filter");
        for i in 0..items {
            let _ = v.add(format!("seed-{i}").as_bytes(), u64::MAX);
        }
        let mut fields = Vec::new();
        valkey::rdb::encode(&v, &mut fields);
        let mut rdb_input = vec![0];
        rdb_input.extend(encode_rdb(1, &fields));
        write(out, "valkey", &format!("rdb-{name}"), &rdb_input);
        let mut blob = vec![1];
        blob.extend(valkey::load::encode(&v));
        write(out, "valkey", &format!("blob-{name}"), &blob);
        let filter = Filter::from(v);
        let chunks: Vec<(i64, Cow<[u8]>)> = scandump::chunks(&filter).collect();
        let chunks: Vec<(i64, &[u8])> = chunks.iter().map(|(n, c)| (*n, &c[..])).collect();
        let stream = encode_dump(&scandump::header(&filter), &chunks);
        write(out, "chunks", &format!("valkey-{name}"), &stream);
    }
    let mut args = b"\x02CAPACITY\n100\nERROR\n0.01\nTIGHTENING\n0.5\nSEED\n".to_vec();
    args.extend([7u8; 32]);
    args.extend(b"\nEXPANSION\n2\nITEMS\na\nb");
    write(out, "valkey", "args-creation", &args);
    write(
        out,
        "valkey",
        "args-nonscaling",
        b"\x02SEED\n0123456789abcdef0123456789abcdef\nNONSCALING",
    );
}

/// The cuckoo target's seeds (first byte: 0 LOADCHUNK stream, 1 RDB value, 2 arguments):
/// filters of several shapes, grown and with deletes, seeded and with RedisBloom's hashing.
fn cuckoo_seeds(out: &Path) {
    let shapes = [
        ("default", 1024, 2, 20, 1, 0, 300),
        ("grown", 16, 1, 5, 2, 9, 200),
        ("wide", 64, 4, 500, 4, 0, 400),
        ("fixed", 16, 4, 5, 0, 3, 20),
    ];
    for (name, capacity, bucket_size, max_iterations, expansion, seed, adds) in shapes {
        let spec = CuckooSpec {
            capacity,
            bucket_size,
            max_iterations,
            expansion,
        };
        let mut cf = Cuckoo::new(&spec, seed, u64::MAX).expect("a small filter");
        for i in 0u32..adds {
            let _ = cf.insert(cf.hash(&i.to_le_bytes()), 32, u64::MAX);
        }
        for i in (0u32..adds).step_by(5) {
            cf.delete(cf.hash(&i.to_le_bytes()));
        }
        let chunks: Vec<(i64, Cow<[u8]>)> = cuckoo_scandump::chunks(&cf).collect();
        let chunks: Vec<(i64, &[u8])> = chunks.iter().map(|(n, c)| (*n, &c[..])).collect();
        let mut stream = vec![0u8];
        stream.extend(encode_dump(&cuckoo_scandump::header(&cf), &chunks));
        write(out, "cuckoo", &format!("chunks-{name}"), &stream);
        let mut fields = Vec::new();
        cuckoo_rdb::encode(&cf, &mut fields);
        let mut value = vec![1u8];
        value.extend(encode_rdb(100, &fields));
        write(out, "cuckoo", &format!("rdb-{name}"), &value);
        // RedisBloom's encoding 4 of a seed-0 filter: rsbloom's without the seed field.
        if seed == 0 {
            fields.remove(7);
            let mut value = vec![1u8];
            value.extend(encode_rdb(4, &fields));
            write(out, "cuckoo", &format!("rdb-redisbloom-{name}"), &value);
        }
    }
    for (i, args) in [
        "1000",
        "1000\nBUCKETSIZE\n4\nMAXITERATIONS\n500\nEXPANSION\n3",
        "8\nbucketsize\n1\nSEED\n0",
        "100\nEXPANSION\nBUCKETSIZE",
        "CAPACITY\n1000\nNOCREATE\nITEMS\na\nb",
        "c\n3\nn\ni",
    ]
    .iter()
    .enumerate()
    {
        let mut input = vec![2u8];
        input.extend(args.as_bytes());
        write(out, "cuckoo", &format!("args-{i}"), &input);
    }
}

/// Bulk blobs: a first byte choosing the form (odd: FRAMED), then URLs as lines or frames,
/// and a framed blob cut inside its last frame.
fn bulk_seeds(out: &Path) {
    let urls: Vec<String> = (0..50)
        .map(|i| format!("https://seed.example/{i}"))
        .collect();
    let mut lines = vec![0u8];
    lines.extend_from_slice(urls.join("\n").as_bytes());
    lines.push(b'\n');
    write(out, "bulk", "lines", &lines);
    let mut framed = vec![1u8];
    for url in &urls {
        rsbloom_core::bulk::push_frame(&mut framed, url.as_bytes());
    }
    write(out, "bulk", "framed", &framed);
    write(out, "bulk", "cut", &framed[..framed.len() - 3]);
}
