//! The CF.* commands: cuckoo filters, RedisBloom's syntax, replies and error texts (the rules
//! are `rsbloom_core::cuckoo`'s), one file per family as the BF.* commands have: [`add`],
//! [`exists`], [`delete`], [`reserve`], [`info`], [`debug`], [`scandump`].
//!
//! - `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [SEED s]`
//! - `CF.ADD / CF.ADDNX key item`; `CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS ...`
//! - `CF.EXISTS key item`; `CF.MEXISTS key item ...`; `CF.COUNT key item`
//! - `CF.DEL key item`; `CF.COMPACT key`
//! - CF.INFO key; CF.DEBUG key
//! - CF.SCANDUMP key iterator; CF.LOADCHUNK key iterator data
//!
//! Every filter rsbloom creates gets a random hash seed, and the creation is replicated as
//! `CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS m EXPANSION e SEED s`, so a replica or an
//! AOF replay holds the same slots. Where RedisBloom misbehaves (crashes, lost chunks, WRONGTYPE
//! read as empty) rsbloom differs, as the README lists.

pub mod add;
pub mod bulk;
pub mod debug;
pub mod delete;
pub mod exists;
pub mod info;
pub mod reserve;
pub mod scandump;

use super::random_seed;
use crate::config;
use crate::ffi::{Args, Ctx, Key};
use rsbloom_core::cuckoo::args::reserve_words;
use rsbloom_core::{errors, Cuckoo, CuckooSpec};

/// Creates `spec` in the empty key `a[1]` with `seed` (random when `None`; see
/// [`super::create`]). Returns the error text to reply when the filter cannot be built.
pub fn create<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    spec: &CuckooSpec,
    seed: Option<u64>,
) -> Result<&'k mut Cuckoo, String> {
    // Seed 0 means RedisBloom's public hash: a random seed never is.
    let seed = seed.unwrap_or_else(|| random_seed().max(1));
    let cf = Cuckoo::new(spec, seed, config::max_filter_bytes())
        .map_err(|e| errors::cuckoo_create_error(&e))?;
    Ok(super::create(
        ctx,
        a,
        key,
        cf,
        c"CF.RESERVE",
        &reserve_words(spec, seed),
    ))
}
