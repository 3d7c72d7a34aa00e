//! The BF.* commands, one file per family: [`add`] (BF.ADD, BF.MADD, BF.INSERT), [`exists`]
//! (BF.EXISTS, BF.MEXISTS), [`reserve`], [`info`] (BF.INFO, BF.CARD), [`debug`], [`scandump`]
//! (BF.SCANDUMP, BF.LOADCHUNK). Window filters are Bloom filters here: the same commands,
//! with their options.

pub mod add;
pub mod bulk;
pub mod debug;
pub mod exists;
pub mod info;
pub mod reserve;
pub mod scandump;

use super::random_seed;
use crate::config;
use crate::ffi::Word;
use crate::ffi::{Args, Ctx, Key};
use rsbloom_core::bloom::args::reserve_words;
use rsbloom_core::valkey::load;
use rsbloom_core::{errors, Filter, FilterSpec, ValkeyBloom, ValkeySpec};

/// Creates the filter `spec` in the empty key `a[1]`, with `seed` or a random one (see
/// [`super::create`]). Returns the error text to reply when the filter cannot be built.
pub fn create<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    spec: FilterSpec,
    seed: Option<u64>,
) -> Result<&'k mut Filter, String> {
    let seed = seed.unwrap_or_else(random_seed);
    let filter = Filter::new(&spec, seed, config::max_filter_bytes())
        .map_err(|e| errors::filter_error(&e))?;
    let words = reserve_words(&spec, seed);
    Ok(super::create(ctx, a, key, filter, c"BF.RESERVE", &words))
}

/// Creates the valkey-bloom filter `spec` in the empty key `a[1]` (a `bloomfltr` key), and
/// replicates its creation as `BF.LOAD key <its blob>`, which a replica or an AOF replay
/// (of rsbloom or valkey-bloom) turns into the same filter. Returns the error text to reply
/// when the filter cannot be built.
pub fn create_valkey<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    spec: &ValkeySpec,
) -> Result<&'k mut Filter, String> {
    let filter =
        ValkeyBloom::new(spec, config::max_filter_bytes()).map_err(|e| errors::filter_error(&e))?;
    let blob = load::encode(&filter);
    ctx.replicate(c"BF.LOAD", a, &[Word::Arg(1), Word::Bytes(&blob)]);
    Ok(key.create(Filter::from(filter)))
}
