//! Writes the `BF.LOAD` blob of an empty valkey-bloom filter to stdout, which `make bench`
//! loads (`BF.LOAD key <blob>`) to measure lookups on a `bloomfltr` key beside a native one:
//! `valkey_filter <error rate> <capacity>` (expansion 2, tightening 0.5, a fixed random-looking
//! seed).

use std::io::Write;

use rsbloom_core::valkey::load;
use rsbloom_core::{ValkeyBloom, ValkeySpec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(error), Some(capacity)) = (
        args.get(1).and_then(|a| a.parse().ok()),
        args.get(2).and_then(|a| a.parse().ok()),
    ) else {
        eprintln!("usage: valkey_filter <error rate> <capacity>");
        std::process::exit(2);
    };
    let spec = ValkeySpec {
        capacity,
        error,
        tightening: 0.5,
        expansion: 2,
        seed: *b"rsbloom bench: a bloomfltr key!!",
    };
    let filter = ValkeyBloom::new(&spec, u64::MAX).unwrap_or_else(|e| {
        eprintln!("valkey_filter: {e:?}");
        std::process::exit(1);
    });
    std::io::stdout()
        .write_all(&load::encode(&filter))
        .expect("write the blob");
}
