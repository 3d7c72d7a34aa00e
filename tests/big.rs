//! A filter past 2^32 bits (capacity 500,000,000 at 0.01, about 600 MB): adds and checks on bit
//! offsets above 2^32, no false negatives, RDB save/load, DUMP/RESTORE and SCANDUMP/LOADCHUNK
//! round trips, with times and peak memory. And a growing filter (`EXPANDABLE`) grown from 100
//! items to 100,000,000 in bounded steps. Needs about 6 GB free; run by `make test-big`
//! (figures with `--nocapture`).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use xxhash_rust::xxh3::xxh3_128_with_seed;

const CAPACITY: &str = "500000000";
const ITEMS: usize = 5_000_000;
const SEED: u64 = 0x0b16_f117_e500;
/// Items per BF.MADD / BF.MEXISTS, and commands per pipeline.
const BATCH: usize = 1000;
const PIPE: usize = 20;
const MAX_CHUNK: usize = 16 << 20;
const TWO_32: u64 = 1 << 32;
/// Servers allow bulk strings this long (the default, 512 MB, is below one DUMP payload).
const BIG_BULK: &[&str] = &["--proto-max-bulk-len", "2gb"];

fn item(i: usize) -> String {
    format!("https://site{}.example/page/{i}", i % 10007)
}

/// rsbloom's bits for an item in a blocked link (tag 5: every link it creates of a million
/// bits or more), computed independently of the module: xxh3-128 under the seed, split into
/// `h1`, `h2 | 1`; the item's 512-bit block is `h1` mapped onto the blocks by multiply-shift,
/// and its bit `j` in the block is the top 9 bits of `h2 × salt_j`, where `salt_j` is
/// SplitMix64's finaliser of `0x6a09e667f3bcc909 ^ j`, made odd.
fn probes(item: &str, bits: u64, hashes: u32) -> impl Iterator<Item = u64> {
    let h = xxh3_128_with_seed(item.as_bytes(), SEED);
    let (h1, h2) = (h as u64, ((h >> 64) as u64) | 1);
    let block = ((u128::from(h1) * u128::from(bits / 512)) >> 64) as u64;
    (0..u64::from(hashes)).map(move |j| {
        let mut salt = 0x6a09_e667_f3bc_c909 ^ j;
        salt = (salt ^ (salt >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        salt = (salt ^ (salt >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        salt ^= salt >> 31;
        block * 512 + (h2.wrapping_mul(salt | 1) >> 55)
    })
}

/// A field of /proc/<pid>/status in bytes (VmRSS, VmHWM).
fn proc_status(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field}"))
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap();
    kb * 1024
}

/// Resets the server's peak RSS (VmHWM) to its current RSS.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("write clear_refs");
}

/// CPU seconds (user + system) the process has used, from /proc/<pid>/stat: unlike wall time,
/// it does not grow when other work shares the machine.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    // fields 14 and 15 of stat(5); `after` starts at field 3
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Runs `f`, returning its wall seconds and the CPU seconds process `pid` spent meanwhile.
fn timed(pid: u32, f: impl FnOnce()) -> (f64, f64) {
    let (t, c) = (Instant::now(), cpu_secs(pid));
    f();
    (t.elapsed().as_secs_f64(), cpu_secs(pid) - c)
}

/// SAVE, DEBUG RELOAD and DUMP (uncompressed) of a filter of `capacity` with `n` items on its
/// own server: the CPU seconds of each, to compare with the big filter's.
fn persistence_cpu(capacity: &str, n: usize) -> (u64, [f64; 3]) {
    let s = Server::with_args(&[], &["--rdbcompression", "yes"]);
    let mut c = s.conn();
    let seed = SEED.to_string();
    let args = [
        "BF.RESERVE",
        "big",
        "0.01",
        capacity,
        "NONSCALING",
        "SEED",
        &seed,
    ];
    assert_eq!(run(&mut c, &args), ok());
    assert_eq!(bulk_op(&mut c, "BF.MADD", 0, n, 1), n);
    let Reply::Arr(info) = run(&mut c, &["BF.INFO", "big", "SIZE"]) else {
        panic!("BF.INFO SIZE")
    };
    let [Reply::Int(size)] = info[..] else {
        panic!("BF.INFO SIZE: {info:?}")
    };
    let save = timed(s.pid, || assert_eq!(run(&mut c, &["SAVE"]), ok())).1;
    let reload = timed(s.pid, || {
        assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok())
    })
    .1;
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "rdbcompression", "no"]),
        ok()
    );
    let dump = timed(s.pid, || {
        assert!(matches!(run(&mut c, &["DUMP", "big"]), Reply::Bulk(_)))
    })
    .1;
    (size as u64, [save, reload, dump])
}

/// Seconds the server spent in `command` so far (INFO commandstats).
fn server_secs(con: &mut redis::Connection, command: &str) -> f64 {
    let Reply::Bulk(info) = run(con, &["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    let info = String::from_utf8(info).unwrap();
    let line = info
        .lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:")))
        .unwrap_or_else(|| panic!("no {command} in INFO commandstats"));
    let usec: f64 = line
        .split(',')
        .find_map(|f| f.strip_prefix("usec="))
        .unwrap()
        .parse()
        .unwrap();
    usec / 1e6
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn digest(con: &mut redis::Connection) -> Reply {
    let d = run(con, &["DEBUG", "DIGEST-VALUE", "big"]);
    assert_ne!(
        d,
        arr(vec![Reply::Status("0".repeat(40))]),
        "big is missing"
    );
    d
}

/// BF.MADD or BF.MEXISTS of `items[lo..hi]` (every `step`-th), pipelined; returns how many
/// answered 1.
fn bulk_op(con: &mut redis::Connection, cmd: &str, lo: usize, hi: usize, step: usize) -> usize {
    let idx: Vec<usize> = (lo..hi).step_by(step).collect();
    let mut ones = 0;
    for group in idx.chunks(BATCH * PIPE) {
        let cmds: Vec<Vec<String>> = group
            .chunks(BATCH)
            .map(|b| {
                let mut c = vec![cmd.to_string(), "big".to_string()];
                c.extend(b.iter().map(|&i| item(i)));
                c
            })
            .collect();
        for (reply, c) in pipeline(con, &cmds).into_iter().zip(&cmds) {
            let Reply::Arr(a) = reply else {
                panic!("{cmd}: {reply:?}")
            };
            assert_eq!(a.len(), c.len() - 2);
            ones += a.iter().filter(|r| **r == int(1)).count();
        }
    }
    ones
}

/// One RESP command written straight from the caller's buffers (a 600 MB argument is not
/// copied into a command object first).
fn send_raw(stream: &mut TcpStream, parts: &[&[u8]]) {
    let mut head = format!("*{}\r\n", parts.len()).into_bytes();
    for p in parts {
        head.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
        if p.len() > 1 << 20 {
            stream.write_all(&head).unwrap();
            stream.write_all(p).unwrap();
            head.clear();
        } else {
            head.extend_from_slice(p);
        }
        head.extend_from_slice(b"\r\n");
    }
    stream.write_all(&head).unwrap();
}

/// Reads one reply: a status/error line as text, or a bulk string's bytes.
fn read_raw(r: &mut BufReader<TcpStream>) -> Result<Vec<u8>, String> {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let line = line.trim_end();
    match line.as_bytes().first() {
        Some(b'+') => Ok(line.as_bytes()[1..].to_vec()),
        Some(b'-') => Err(line[1..].to_string()),
        Some(b'$') => {
            let n: usize = line[1..].parse().unwrap();
            let mut buf = vec![0u8; n + 2];
            r.read_exact(&mut buf).unwrap();
            buf.truncate(n);
            Ok(buf)
        }
        _ => panic!("unexpected reply line {line:?}"),
    }
}

fn raw_conn(s: &Server) -> (TcpStream, BufReader<TcpStream>) {
    let stream = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(300)))
        .unwrap();
    let reader = BufReader::with_capacity(1 << 20, stream.try_clone().unwrap());
    (stream, reader)
}

#[test]
fn filter_past_four_gigabits() {
    let t_all = Instant::now();
    let a = Server::with_args(&[], BIG_BULK);
    let mut ca = a.conn();
    let rss0 = proc_status(a.pid, "VmRSS");

    // ---- create
    let t = Instant::now();
    assert_eq!(
        run(
            &mut ca,
            &[
                "BF.RESERVE",
                "big",
                "0.01",
                CAPACITY,
                "NONSCALING",
                "SEED",
                &SEED.to_string()
            ]
        ),
        ok()
    );
    let reserve_secs = t.elapsed().as_secs_f64();
    let Reply::Arr(debug) = run(&mut ca, &["BF.DEBUG", "big"]) else {
        panic!("BF.DEBUG")
    };
    let Reply::Bulk(line) = &debug[1] else {
        panic!("{debug:?}")
    };
    let line = String::from_utf8(line.clone()).unwrap();
    let field = |name: &str| -> u64 {
        line.split(' ')
            .find_map(|f| f.strip_prefix(&format!("{name}:")))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (bits, bytes, hashes) = (field("bits"), field("bytes"), field("hashes") as u32);
    assert!(bits > TWO_32, "{line}");
    assert_eq!(bytes * 8, bits);
    let Reply::Int(usage) = run(&mut ca, &["MEMORY", "USAGE", "big"]) else {
        panic!("MEMORY USAGE")
    };
    // The block the allocator hands out: its size class, up to a quarter more than asked.
    assert!(usage as u64 >= bytes && (usage as u64) <= bytes + bytes / 4 + 4096);
    println!(
        "big: BF.RESERVE big 0.01 {CAPACITY} NONSCALING: {bits} bits ({:.2} x 2^32), {bytes} bytes ({:.1} MiB), {hashes} hashes, in {reserve_secs:.3} s; RSS grew {:.1} MiB (calloc'd, untouched)",
        bits as f64 / TWO_32 as f64,
        mb(bytes),
        mb(proc_status(a.pid, "VmRSS").saturating_sub(rss0))
    );

    // ---- adds: with so few items for the capacity, every add is new
    let t = Instant::now();
    let added = bulk_op(&mut ca, "BF.MADD", 0, ITEMS, 1);
    let add_secs = t.elapsed().as_secs_f64();
    assert_eq!(added, ITEMS, "every add answered 1");
    assert_eq!(run(&mut ca, &["BF.CARD", "big"]), int(ITEMS as i64));
    let t = Instant::now();
    let present = bulk_op(&mut ca, "BF.MEXISTS", 0, ITEMS, 1);
    let check_secs = t.elapsed().as_secs_f64();
    assert_eq!(present, ITEMS, "no false negatives");
    let false_pos = bulk_op(&mut ca, "BF.MEXISTS", ITEMS, ITEMS + 1_000_000, 1);
    assert!(false_pos <= 2, "{false_pos} false positives in 1,000,000");
    println!(
        "big: {ITEMS} items added in {add_secs:.1} s (BF.MADD x{BATCH}, pipelined), all {present} present in {check_secs:.1} s; {false_pos} of 1,000,000 absent items answered 1"
    );
    let d0 = digest(&mut ca);

    // Where the first 200,000 items' probes land, per the hashing the README documents.
    let mut probe_bits: Vec<u64> = (0..200_000)
        .flat_map(|i| probes(&item(i), bits, hashes).collect::<Vec<_>>())
        .collect();
    probe_bits.sort_unstable();
    let high_probes = probe_bits.iter().filter(|&&p| p >= TWO_32).count();
    assert!(high_probes > probe_bits.len() / 10, "{high_probes}");

    // ---- SCANDUMP on A, replayed chunk by chunk into C with LOADCHUNK
    let c = Server::with_args(&[], &[]);
    let mut cc = c.conn();
    let (mut scan_secs, mut load_secs) = (0.0, 0.0);
    let mut it = 0i64;
    let (mut chunks, mut data_bytes, mut max_chunk) = (0usize, 0u64, 0usize);
    let (mut pop_low, mut pop_high) = (0u64, 0u64);
    let mut next_probe = 0usize;
    loop {
        let t = Instant::now();
        let Reply::Arr(v) = run(&mut ca, &["BF.SCANDUMP", "big", &it.to_string()]) else {
            panic!("SCANDUMP {it}")
        };
        scan_secs += t.elapsed().as_secs_f64();
        let (next, data) = match &v[..] {
            [Reply::Int(0), Reply::Bulk(d)] if d.is_empty() => break,
            [Reply::Int(n), Reply::Bulk(d)] => (*n, d),
            other => panic!("SCANDUMP {it}: {other:?}"),
        };
        if it == 0 {
            assert_eq!(next, 1);
            // the header carries the 64-bit bit count of the link
            assert_eq!(u64::from_le_bytes(data[28..36].try_into().unwrap()), bits);
        } else {
            assert_eq!(next, it + data.len() as i64, "iterator after {it}");
            assert!(data.len() <= MAX_CHUNK, "chunk of {} bytes", data.len());
            max_chunk = max_chunk.max(data.len());
            let start = (it - 1) as u64; // byte offset of this chunk in the bit array
            for (j, &byte) in data.iter().enumerate() {
                if (start + j as u64) * 8 >= TWO_32 {
                    pop_high += u64::from(byte.count_ones());
                } else {
                    pop_low += u64::from(byte.count_ones());
                }
            }
            let end_bit = (start + data.len() as u64) * 8;
            while next_probe < probe_bits.len() && probe_bits[next_probe] < end_bit {
                let p = probe_bits[next_probe];
                let byte = data[(p / 8 - start) as usize];
                assert!(byte & (1 << (p % 8)) != 0, "probe bit {p} is not set");
                next_probe += 1;
            }
            chunks += 1;
            data_bytes += data.len() as u64;
        }
        let t = Instant::now();
        let next_s = next.to_string();
        let args: [&[u8]; 4] = [b"BF.LOADCHUNK", b"big", next_s.as_bytes(), data];
        assert_eq!(run(&mut cc, &args), ok(), "LOADCHUNK {next}");
        load_secs += t.elapsed().as_secs_f64();
        it = next;
    }
    assert_eq!(next_probe, probe_bits.len(), "every probe checked");
    assert_eq!(data_bytes, bytes);
    assert_eq!(chunks as u64, bytes.div_ceil(MAX_CHUNK as u64));
    // Set bits are spread evenly, above 2^32 as below: each region holds its share of the
    // expected m(1 - e^(-kn/m)) set bits.
    let expected = bits as f64 * -(-(f64::from(hashes) * ITEMS as f64 / bits as f64)).exp_m1();
    let high_share = (bits - TWO_32) as f64 / bits as f64;
    let exp_high = expected * high_share;
    assert!(
        (pop_high as f64 - exp_high).abs() < exp_high * 0.01,
        "{pop_high} bits set above 2^32, expected {exp_high:.0}"
    );
    assert!((pop_low as f64 - (expected - exp_high)).abs() < expected * 0.01);
    let scan_server = server_secs(&mut ca, "bf.scandump");
    let load_server = server_secs(&mut cc, "bf.loadchunk");
    assert_eq!(digest(&mut cc), d0, "LOADCHUNK copy");
    assert_eq!(bulk_op(&mut cc, "BF.MEXISTS", 0, ITEMS, 10), ITEMS / 10);
    println!(
        "big: SCANDUMP walked {data_bytes} bytes in {chunks} chunks (largest {max_chunk} bytes) in {scan_secs:.2} s ({scan_server:.2} s in the server); LOADCHUNK rebuilt it on another server in {load_secs:.2} s ({load_server:.2} s in the server); same digest; {pop_high} bits set above 2^32 (expected {exp_high:.0}), {pop_low} below; all {} probes of 200,000 items set ({high_probes} above 2^32)",
        probe_bits.len()
    );

    // Checks and adds read and write bits above 2^32: clear the byte of one high probe of an
    // item on the copy, and the item reads absent there until it is added again.
    let (victim, high_bit) = (0..)
        .find_map(|i| {
            let it = item(i);
            probes(&it, bits, hashes)
                .find(|&p| p >= TWO_32 + (bits - TWO_32) / 2)
                .map(|p| (it, p))
        })
        .unwrap();
    let byte_pos = high_bit / 8;
    let iterator = (byte_pos + 2).to_string(); // the iterator SCANDUMP pairs with [byte_pos]
    let args: [&[u8]; 4] = [b"BF.LOADCHUNK", b"big", iterator.as_bytes(), &[0u8]];
    assert_eq!(run(&mut cc, &args), ok());
    assert_eq!(run(&mut cc, &["BF.EXISTS", "big", &victim]), int(0));
    assert_eq!(run(&mut ca, &["BF.EXISTS", "big", &victim]), int(1));
    assert_eq!(run(&mut cc, &["BF.ADD", "big", &victim]), int(1));
    let Reply::Arr(v) = run(
        &mut cc,
        &["BF.SCANDUMP", "big", &(byte_pos + 1).to_string()],
    ) else {
        panic!("SCANDUMP")
    };
    let Reply::Bulk(d) = &v[1] else { panic!() };
    assert!(
        d[0] & (1 << (high_bit % 8)) != 0,
        "BF.ADD set bit {high_bit}"
    );
    println!("big: clearing bit {high_bit}'s byte made {victim:?} absent; BF.ADD set it again");
    drop(cc);
    drop(c);

    // ---- RDB: SAVE, then a fresh server that loads the file, then DEBUG RELOAD
    let rss = proc_status(a.pid, "VmRSS");
    reset_peak(a.pid);
    let (save_secs, save_cpu) = timed(a.pid, || assert_eq!(run(&mut ca, &["SAVE"]), ok()));
    let save_peak = proc_status(a.pid, "VmHWM").saturating_sub(rss);
    let rdb = a.dir.join("dump.rdb");
    let rdb_bytes = std::fs::metadata(&rdb).unwrap().len();
    let t = Instant::now();
    let d = Server::try_with_module(&module_path(), Some(&rdb), &[], BIG_BULK)
        .unwrap_or_else(|log| panic!("loading the RDB:\n{log}"));
    let start_load_secs = t.elapsed().as_secs_f64();
    let d_peak = proc_status(d.pid, "VmHWM");
    assert_eq!(digest(&mut d.conn()), d0, "RDB loaded by a fresh server");
    assert_eq!(
        bulk_op(&mut d.conn(), "BF.MEXISTS", 5, ITEMS, 10),
        ITEMS / 10
    );
    drop(d);
    let rss = proc_status(a.pid, "VmRSS");
    reset_peak(a.pid);
    let (reload_secs, reload_cpu) = timed(a.pid, || {
        assert_eq!(run(&mut ca, &["DEBUG", "RELOAD"]), ok())
    });
    let reload_peak = proc_status(a.pid, "VmHWM").saturating_sub(rss);
    assert_eq!(digest(&mut ca), d0, "after DEBUG RELOAD");
    assert_eq!(bulk_op(&mut ca, "BF.MEXISTS", 3, ITEMS, 10), ITEMS / 10);
    // Saving streams the bit array in 16 MiB pieces; loading fills the one allocation.
    assert!(
        save_peak < 128 << 20,
        "SAVE grew the peak RSS by {save_peak}"
    );
    assert!(
        d_peak < bytes + bytes / 10 + (64 << 20),
        "a server that loaded the RDB peaked at {d_peak} bytes for a {bytes}-byte filter"
    );
    assert!(
        reload_peak < bytes / 4,
        "DEBUG RELOAD grew the peak RSS by {reload_peak}"
    );
    println!(
        "big: SAVE {save_secs:.2} s (RDB {rdb_bytes} bytes, {:.1} MiB; peak RSS +{:.1} MiB); a fresh server loaded it in {start_load_secs:.2} s (start to PING) with peak RSS {:.1} MiB; DEBUG RELOAD (save + load) {reload_secs:.2} s, peak RSS +{:.1} MiB; same digest",
        mb(rdb_bytes),
        mb(save_peak),
        mb(d_peak),
        mb(reload_peak)
    );

    // ---- DUMP / RESTORE onto a second server, uncompressed: the payload of a full filter
    assert_eq!(
        run(&mut ca, &["CONFIG", "SET", "rdbcompression", "no"]),
        ok()
    );
    let (mut sa, mut ra) = raw_conn(&a);
    let rss = proc_status(a.pid, "VmRSS");
    reset_peak(a.pid);
    let mut payload = Vec::new();
    let (dump_secs, dump_cpu) = timed(a.pid, || {
        send_raw(&mut sa, &[b"DUMP", b"big"]);
        payload = read_raw(&mut ra).expect("DUMP");
    });
    let dump_peak = proc_status(a.pid, "VmHWM").saturating_sub(rss);
    assert!(payload.len() as u64 > bytes && payload.len() as u64 > 512 << 20);
    let b = Server::with_args(&[], &[]);
    let (mut sb, mut rb) = raw_conn(&b);
    // Past the default proto-max-bulk-len the server refuses the argument up front.
    let mut head = b"*4\r\n$7\r\nRESTORE\r\n$3\r\nbig\r\n$1\r\n0\r\n".to_vec();
    head.extend_from_slice(format!("${}\r\n", payload.len()).as_bytes());
    sb.write_all(&head).unwrap();
    let refused = read_raw(&mut rb).unwrap_err();
    assert!(refused.contains("invalid bulk length"), "{refused}");
    drop((sb, rb));
    let mut cb = b.conn();
    assert_eq!(
        run(&mut cb, &["CONFIG", "SET", "proto-max-bulk-len", "2gb"]),
        ok()
    );
    let (mut sb, mut rb) = raw_conn(&b);
    let rss_b = proc_status(b.pid, "VmRSS");
    let t = Instant::now();
    send_raw(&mut sb, &[b"RESTORE", b"big", b"0", &payload]);
    assert_eq!(read_raw(&mut rb).unwrap(), b"OK");
    let restore_secs = t.elapsed().as_secs_f64();
    let restore_peak = proc_status(b.pid, "VmHWM").saturating_sub(rss_b);
    let dump_server = server_secs(&mut ca, "dump");
    let restore_server = server_secs(&mut cb, "restore");
    assert_eq!(digest(&mut cb), d0, "RESTORE copy");
    assert_eq!(bulk_op(&mut cb, "BF.MEXISTS", 7, ITEMS, 10), ITEMS / 10);
    assert_eq!(run(&mut cb, &["BF.CARD", "big"]), int(ITEMS as i64));
    println!(
        "big: DUMP {dump_secs:.2} s ({dump_server:.2} s in the server; {} byte payload, rdbcompression no; source peak RSS +{:.1} MiB), RESTORE on another server {restore_secs:.2} s ({restore_server:.2} s in the server; peak RSS +{:.1} MiB, payload included); same digest; without proto-max-bulk-len the server answered {refused:?}",
        payload.len(),
        mb(dump_peak),
        mb(restore_peak)
    );
    // What the machine must hold at once (the Makefile's test-big threshold derives from it).
    let (peak_a, peak_b) = (proc_status(a.pid, "VmHWM"), proc_status(b.pid, "VmHWM"));
    let peak_self = proc_status(std::process::id(), "VmHWM");
    println!(
        "big: peak RSS during DUMP/RESTORE: source {:.0} MiB, target {:.0} MiB, test process {:.0} MiB; {:.0} MiB together",
        mb(peak_a),
        mb(peak_b),
        mb(peak_self),
        mb(peak_a + peak_b + peak_self)
    );
    drop((sb, rb, cb, b, payload));

    // Linear time: a filter a quarter the size, with a quarter of the items, costs about a
    // quarter of the CPU time to save, reload and dump (a quadratic step would cost 1/16).
    let (small_bytes, small) = persistence_cpu("125000000", ITEMS / 4);
    let ratio = bytes as f64 / small_bytes as f64;
    let big_cpu = [save_cpu, reload_cpu, dump_cpu];
    for (name, (b, s)) in ["SAVE", "DEBUG RELOAD", "DUMP"]
        .iter()
        .zip(big_cpu.iter().zip(small))
    {
        println!(
            "big: {name}: {b:.2} CPU s for {bytes} bytes, {s:.2} CPU s for {small_bytes} bytes: x{:.1} for x{ratio:.1} the size",
            b / s.max(0.01)
        );
    }
    for (name, (b, s)) in ["SAVE", "DEBUG RELOAD"]
        .iter()
        .zip(big_cpu.iter().zip(small))
    {
        assert!(
            *b < s.max(0.05) * ratio * 2.0,
            "{name}: {b:.2} CPU s at {bytes} bytes vs {s:.2} at {small_bytes}: not linear"
        );
    }
    println!("big: whole test {:.1} s", t_all.elapsed().as_secs_f64());
}

/// Items of the growing filter's test.
const GROWING_ITEMS: usize = 100_000_000;

/// A growing filter from 100 items to 100,000,000: every add of the way grows it by at most one
/// line (one group's lines rewritten), so no command waits for the filter to grow. The
/// server's slow log (from 25 ms, 80 times what a blob of 1,000 adds takes) stays empty
/// through 100,000 `BF.BULKADD`s; the filter holds its rate and every item; it has one line
/// per 31 items (at 1%), a line more when the 31st of the last one comes.
#[test]
fn a_growing_filter_reaches_100m_items_in_bounded_steps() {
    let s = Server::with_args(&[], &["--slowlog-log-slower-than", "25000"]);
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "g", "0.01", "100", "EXPANDABLE"]),
        ok()
    );
    let t = Instant::now();
    for start in (0..GROWING_ITEMS).step_by(BATCH * PIPE) {
        let mut pipe = redis::pipe();
        for at in (start..start + BATCH * PIPE).step_by(BATCH) {
            let blob: Vec<u8> = (at..at + BATCH)
                .map(item)
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes();
            pipe.cmd("BF.BULKADD").arg("g").arg(blob);
        }
        let replies: Vec<Vec<u8>> = pipe.query(&mut c).unwrap();
        assert!(replies
            .iter()
            .all(|r| r.len() == BATCH && !r.contains(&b'E')));
    }
    println!(
        "100M adds into a growing filter: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let slow = run(&mut c, &["SLOWLOG", "GET", "10"]);
    assert_eq!(
        run(&mut c, &["SLOWLOG", "LEN"]),
        int(0),
        "commands over 25 ms: {slow:?}"
    );
    let line = &debug_lines(&mut c, "g")[1];
    let field = |name: &str| -> u64 {
        let at = line.find(&format!(" {name}:")).unwrap() + name.len() + 2;
        line[at..].split(' ').next().unwrap().parse().unwrap()
    };
    let Reply::Int(items) = run(&mut c, &["BF.CARD", "g"]) else {
        panic!("BF.CARD")
    };
    // Adds answered 0 (a false positive) took no entry.
    assert!(items as usize > GROWING_ITEMS * 99 / 100, "{items}");
    assert!(line.contains(" format:lines "), "{line}");
    assert_eq!(field("lines"), (items as u64 - 1) / 31 + 1);
    let sample: Vec<String> = (0..GROWING_ITEMS).step_by(10_007).map(item).collect();
    let present: Vec<u8> = redis::cmd("BF.BULKEXISTS")
        .arg("g")
        .arg(sample.join("\n"))
        .query(&mut c)
        .unwrap();
    assert!(present.iter().all(|&b| b == b'1'), "a false negative");
    let absent: Vec<String> = (0..100_000)
        .map(|i| format!("https://elsewhere.example/{i}"))
        .collect();
    let answers: Vec<u8> = redis::cmd("BF.BULKEXISTS")
        .arg("g")
        .arg(absent.join("\n"))
        .query(&mut c)
        .unwrap();
    let rate = answers.iter().filter(|&&b| b == b'1').count() as f64 / absent.len() as f64;
    println!(
        "growing filter at 100M: {line}, false positives {:.3}%",
        rate * 100.0
    );
    assert!(rate <= 0.01, "{rate}");
}
