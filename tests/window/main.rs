//! Window filters (`SLIDING`, `WINDOW seconds`) through the server: options and their errors,
//! forgetting by count and by the clock (driven by `AT`, so no test sleeps for a window),
//! replication and AOF replay to identical bits, persistence, SCANDUMP's window dialect,
//! DUMP/RESTORE, COPY, hostile state, and the memory per window item.

#[path = "../common/mod.rs"]
mod common;

mod forgetting;
mod formats;
mod options;
mod tracking;

use common::*;
use redis::Value;

/// Milliseconds since the Unix epoch, as the server's clock reads.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn config_set(c: &mut redis::Connection, name: &str, value: &str) -> Reply {
    run(c, &["CONFIG", "SET", name, value])
}

fn insert_at(c: &mut redis::Connection, key: &str, at: u64, its: &[String]) -> Reply {
    let at = at.to_string();
    let mut args = vec!["BF.INSERT", key, "NOCREATE", "AT", &at, "ITEMS"];
    args.extend(its.iter().map(String::as_str));
    run(c, &args)
}

/// The `BF.INFO key WINDOW` map as (name, reply) pairs, from either protocol.
fn window_info(c: &mut redis::Connection, key: &str) -> Vec<(String, Reply)> {
    let name = |r: Reply| match r {
        Reply::Status(s) => s,
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    match run(c, &["BF.INFO", key, "WINDOW"]) {
        Reply::Arr(v) => v
            .chunks(2)
            .map(|p| (name(p[0].clone()), p[1].clone()))
            .collect(),
        Reply::Map(m) => m.into_iter().map(|(k, v)| (name(k), v)).collect(),
        other => panic!("{other:?}"),
    }
}

fn window_field(c: &mut redis::Connection, key: &str, field: &str) -> Reply {
    window_info(c, key)
        .into_iter()
        .find(|(k, _)| k == field)
        .unwrap_or_else(|| panic!("no {field}"))
        .1
}
