//! Creating a filter: a fresh random hash seed per filter, and replication of the creation
//! in an explicit form that carries the seed and every parameter, so a replica or an AOF
//! replay builds identical bits whatever its own defaults are.

use std::io::Read;

use redis_module::raw;

use super::{Args, Ctx, Key};
use crate::config;
use crate::core::{Chain, ChainParams};

/// Parameters of a filter to create, before the seed is chosen.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub error: f64,
    pub capacity: u64,
    pub expansion: u32,
    pub nonscaling: bool,
}

/// The expansion every NONSCALING filter stores (RedisBloom's default growth).
pub const NONSCALING_EXPANSION: u32 = 2;

impl Shape {
    /// The module defaults, for filters created implicitly by an add.
    pub fn defaults() -> Self {
        let expansion = config::expansion();
        Shape {
            error: config::error_rate(),
            capacity: config::initial_size(),
            expansion: expansion.max(1),
            nonscaling: expansion == 0,
        }
    }

    /// The parameters of the chain this shape creates. A NONSCALING chain never grows and its
    /// replicated form (`NONSCALING`) carries no expansion, so it stores a fixed one: a replica
    /// or an AOF replay then rebuilds the same filter whatever its `bf.expansion`.
    pub fn params(&self, seed: u64, max_bytes: u64) -> ChainParams {
        ChainParams {
            error: self.error,
            capacity: self.capacity,
            expansion: if self.nonscaling {
                NONSCALING_EXPANSION
            } else {
                self.expansion
            },
            nonscaling: self.nonscaling,
            seed,
            max_bytes,
        }
    }
}

/// A seed from the operating system's random source.
fn random_seed() -> u64 {
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

/// Creates the filter in the empty key `args[1]`, with `seed` or a random one, and
/// replicates `BF.RESERVE key error capacity (EXPANSION n | NONSCALING) SEED seed`.
pub fn create<'k>(
    ctx: &Ctx,
    args: &Args,
    key: &'k Key,
    shape: Shape,
    seed: Option<u64>,
) -> Result<&'k mut Chain, String> {
    let seed = seed.unwrap_or_else(random_seed);
    let params = shape.params(seed, config::max_filter_bytes());
    let chain = Chain::new(&params).map_err(|e| super::chain_error_text(&e))?;
    replicate_reserve(ctx, args, shape, seed);
    Ok(key.create(chain))
}

fn replicate_reserve(ctx: &Ctx, args: &Args, shape: Shape, seed: u64) {
    // `{:?}` prints the shortest text that parses back to the same f64.
    let mut words = vec![format!("{:?}", shape.error), shape.capacity.to_string()];
    if shape.nonscaling {
        words.push("NONSCALING".into());
    } else {
        words.extend(["EXPANSION".into(), shape.expansion.to_string()]);
    }
    words.extend(["SEED".into(), seed.to_string()]);
    let mut argv: Vec<*mut raw::RedisModuleString> = vec![args.raw(1)];
    argv.extend(words.iter().map(|w| {
        // SAFETY: live context; the string is freed below, after Replicate took its own refs.
        unsafe { raw::RedisModule_CreateString.unwrap()(ctx.0, w.as_ptr().cast(), w.len()) }
    }));
    // SAFETY: "v" takes an array of RedisModuleString pointers and its length, both valid here.
    unsafe {
        raw::RedisModule_Replicate.unwrap()(
            ctx.0,
            c"BF.RESERVE".as_ptr(),
            c"v".as_ptr(),
            argv.as_ptr(),
            argv.len(),
        )
    };
    for &s in &argv[1..] {
        // SAFETY: each was created above by CreateString and is freed exactly once.
        unsafe { raw::RedisModule_FreeString.unwrap()(ctx.0, s) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonscaling_filters_store_one_expansion_whatever_the_default() {
        let shape = |expansion, nonscaling| Shape {
            error: 0.01,
            capacity: 100,
            expansion,
            nonscaling,
        };
        // As a master with bf.expansion 4 creates it, and as a replica with 2 or 1 replays it.
        let master = shape(4, true).params(9, 1 << 20);
        for replayed in [shape(2, true), shape(1, true)] {
            assert_eq!(replayed.params(9, 1 << 20), master);
        }
        assert_eq!(master.expansion, NONSCALING_EXPANSION);
        assert_eq!(shape(4, false).params(9, 1 << 20).expansion, 4);
    }
}
