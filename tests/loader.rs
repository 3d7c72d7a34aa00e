//! `rsbloom load` and `rsbloom dedup` (the cli crate) against a real server: a file loaded
//! whole, a stream deduplicated in order, a cuckoo filter, a refused item named by its line,
//! and a server killed mid-load (the exit code and message, and every line acknowledged before
//! the kill still in the filter after a restart from the AOF).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use common::*;

fn url(s: &Server) -> String {
    format!("redis://127.0.0.1:{}", s.port)
}

fn lines(prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("https://{prefix}.example.com/page/{i}"))
        .collect()
}

/// Runs `rsbloom <args>` with `stdin` as its input.
fn rsbloom(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(cli_path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rsbloom runs");
    // A loader that stops early (no server, a refused item) closes its input: no error here.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn load_fills_a_filter_and_dedup_passes_only_new_lines() {
    let s = Server::new();
    let mut c = s.conn();
    let urls = lines("load", 20_000);
    let dir = std::env::temp_dir().join(format!("rsbloom-loader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("urls.txt");
    std::fs::write(&file, urls.join("\n") + "\n").unwrap();
    let u = url(&s);
    let args = [
        "load",
        "-u",
        &u,
        "-k",
        "seen",
        "--error-rate",
        "0.0001",
        "--capacity",
        "100000",
    ];
    let out = rsbloom(&[&args[..], &[file.to_str().unwrap()]].concat(), b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("rsbloom: 20000 lines into seen (20000 new, 0 already there)"),
        "{err}"
    );
    assert_eq!(run(&mut c, &["BF.CARD", "seen"]), int(20_000));
    let info = run(&mut c, &["BF.INFO", "seen", "CAPACITY"]);
    assert_eq!(info, arr(vec![int(100_000)]), "created with the options");
    let present = run(
        &mut c,
        &[
            &["BF.MEXISTS", "seen"][..],
            &urls.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(present, Reply::Arr(vec![int(1); urls.len()]));
    // dedup: lines already loaded, new lines twice, an empty line; only first sightings pass.
    let fresh = lines("fresh", 3000);
    let mut input: Vec<String> = urls[..2000].to_vec();
    input.extend(fresh.iter().cloned());
    input.extend(fresh[..1000].iter().cloned());
    input.push(String::new());
    let out = rsbloom(
        &["dedup", "-u", &u, "-k", "seen"],
        (input.join("\n") + "\n").as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passed: Vec<String> = out.stdout.lines().map(Result::unwrap).collect();
    // At a rate of 1e-4, a handful of new lines may read as seen; none passes twice.
    assert!(
        passed.len() <= fresh.len() + 1 && passed.len() >= fresh.len() - 5,
        "{}",
        passed.len()
    );
    assert_eq!(
        passed.last().map(String::as_str),
        Some(""),
        "the empty line is an item"
    );
    let mut expected = fresh.iter();
    for line in passed.iter().filter(|l| !l.is_empty()) {
        assert!(
            expected.any(|f| f == line),
            "{line} out of order or not new"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cuckoo_filter_and_a_refused_item() {
    let s = Server::new();
    let mut c = s.conn();
    let u = url(&s);
    let urls = lines("cf", 5000).join("\n");
    let out = rsbloom(
        &[
            "load",
            "-u",
            &u,
            "-k",
            "cf",
            "--cuckoo",
            "--capacity",
            "8192",
        ],
        urls.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        run(
            &mut c,
            &["CF.EXISTS", "cf", "https://cf.example.com/page/4999"]
        ),
        int(1)
    );
    // A NONSCALING filter of 100 items: the load stops at the first item it refuses.
    let args = [
        "load",
        "-u",
        &u,
        "-k",
        "small",
        "--error-rate",
        "0.01",
        "--capacity",
        "100",
        "--nonscaling",
        "--batch",
        "50",
    ];
    let out = rsbloom(&args, urls.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(": the filter refused the item"), "{err}");
    let line: u64 = err
        .split("line ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((100..=200).contains(&line), "{err}");
    // Creation options that cannot apply are refused, not ignored.
    for args in [
        &["load", "-u", &u, "-k", "x", "--sliding"][..],
        &["load", "-u", &u, "-k", "x", "--expansion", "4"],
        &[
            "load",
            "-u",
            &u,
            "-k",
            "x",
            "--cuckoo",
            "--capacity",
            "10",
            "--sliding",
        ],
    ] {
        let out = rsbloom(args, b"a\n");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(run(&mut c, &["EXISTS", "x"]), int(0), "{args:?}");
    }
    // No server: exit 1, said so.
    let out = rsbloom(&["load", "-u", "redis://127.0.0.1:1", "-k", "x"], b"a\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

#[test]
fn a_server_killed_mid_load_loses_nothing_acknowledged() {
    let mut s = Server::with_args(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let u = url(&s);
    let mut child = Command::new(cli_path())
        .args([
            "load",
            "-u",
            &u,
            "-k",
            "k",
            "--batch",
            "500",
            "--pipeline",
            "2",
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let urls = lines("kill", 400_000);
    // The first half, then the kill once the server holds some of it, then the rest.
    stdin
        .write_all((urls[..200_000].join("\n") + "\n").as_bytes())
        .unwrap();
    let mut c = s.conn();
    s.wait_for(
        "the loader's first items",
        60,
        || matches!(run(&mut c, &["BF.CARD", "k"]), Reply::Int(n) if n > 0),
    );
    s.kill();
    let _ = stdin.write_all((urls[200_000..].join("\n") + "\n").as_bytes());
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        err += &line.unwrap();
    }
    assert_eq!(status.code(), Some(2), "{err}");
    let acked: usize = err
        .split("acknowledged the first ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no acknowledged count in {err:?}"));
    assert!(acked < urls.len(), "{err}");
    s.revive();
    let mut c = s.conn();
    for chunk in urls[..acked].chunks(10_000) {
        let args: Vec<&str> = ["BF.MEXISTS", "k"]
            .into_iter()
            .chain(chunk.iter().map(String::as_str))
            .collect();
        assert_eq!(run(&mut c, &args), Reply::Arr(vec![int(1); chunk.len()]));
    }
}
