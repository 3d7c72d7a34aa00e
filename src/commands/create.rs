//! Creating a filter: a fresh random hash seed per filter, and replication of the creation
//! in the explicit form ([`args::reserve_words`]) that carries the seed and every parameter, so
//! a replica or an AOF replay builds identical bits whatever its own defaults are.

use std::io::Read;

use super::chain_error_text;
use crate::config;
use crate::redis::{Args, Ctx, Key, Word};
use rsbloom_core::args;
use rsbloom_core::{Filter, FilterSpec};

/// A seed from the operating system's random source.
pub fn random_seed() -> u64 {
    let mut buf = [0u8; 8];
    match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buf)) {
        Ok(()) => u64::from_le_bytes(buf),
        // No /dev/urandom (a chroot): fall back on std's per-process random keys.
        Err(_) => {
            use std::hash::{BuildHasher, RandomState};
            RandomState::new().hash_one(std::time::SystemTime::now())
        }
    }
}

/// Creates the filter `spec` in the empty key `args[1]`, with `seed` or a random one, and
/// replicates `BF.RESERVE key error capacity [SLIDING | WINDOW s] (EXPANSION n | NONSCALING)
/// SEED seed`. Returns the error text to reply when the filter cannot be built.
pub fn create<'k>(
    ctx: &Ctx,
    args: &Args,
    key: &'k mut Key,
    spec: FilterSpec,
    seed: Option<u64>,
) -> Result<&'k mut Filter, String> {
    let seed = seed.unwrap_or_else(random_seed);
    let filter =
        Filter::new(&spec, seed, config::max_filter_bytes()).map_err(|e| chain_error_text(&e))?;
    let words = args::reserve_words(&spec, seed);
    let argv: Vec<Word> = std::iter::once(Word::Arg(1))
        .chain(words.iter().map(|w| Word::Text(w)))
        .collect();
    ctx.replicate(c"BF.RESERVE", args, &argv);
    Ok(key.create(filter))
}
