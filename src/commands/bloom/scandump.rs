//! BF.SCANDUMP key iterator, BF.LOADCHUNK key iterator data: the incremental dump and restore
//! of a filter (format and iterator rules in `core::scandump`); BF.LOAD key blob: valkey-bloom's
//! restore of a whole filter, the command its AOF rewrite writes (and rsbloom's, for its keys).

use crate::commands::{reply_scan, with_value};
use crate::config;
use crate::ffi::{Args, Ctx, KeyContent};
use rsbloom_core::scandump;
use rsbloom_core::valkey::load::{self as valkey_load, LoadError};
use rsbloom_core::Filter;
use rsbloom_core::FIXED_SEED;
use rsbloom_core::{args, errors};

pub fn scandump(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    // RedisBloom looks the key up before it parses the iterator.
    with_value(ctx, a, false, |filter: &mut Filter| {
        let Some(iterator) = args::integer(a.get(2)) else {
            return ctx.reply_error(errors::SCANDUMP_BAD_ITERATOR);
        };
        reply_scan(ctx, scandump::scan(filter, iterator), |ctx| {
            ctx.reply_bulk(b"")
        });
    });
}

pub fn loadchunk(ctx: &Ctx, a: &Args) {
    if a.len() != 4 {
        return ctx.reply_wrong_arity();
    }
    let Some(iterator) = args::integer(a.get(2)) else {
        return ctx.reply_error(errors::LOADCHUNK_BAD_ITERATOR);
    };
    let data = a.get(3);
    let mut key = ctx.open_key(a, 1, true);
    let result = match key.content::<Filter>() {
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Empty if iterator != 1 => return ctx.reply_error(errors::NOT_FOUND),
        // A chain from a RedisBloom header gets the fixed seed, so that a replica or an AOF
        // replay of this command grows identical native links later.
        KeyContent::Empty => {
            scandump::filter_from_header(data, FIXED_SEED, config::max_filter_bytes()).map(
                |filter| {
                    key.create(filter);
                },
            )
        }
        KeyContent::Value(filter) => scandump::load_chunk(filter, iterator, data),
    };
    match result {
        Err(e) => ctx.reply_error(&errors::bloom_dump_error(&e)),
        Ok(()) => {
            ctx.reply_ok();
            ctx.replicate_verbatim();
            ctx.notify(c"bf.loadchunk", a, 1);
        }
    }
}

/// BF.LOAD key blob: creates the valkey-bloom filter of `blob` in a missing key, as
/// valkey-bloom does (its replies: BUSYKEY when the key holds a filter, its decoding errors),
/// within the per-filter limit. Replicated as received.
pub fn load(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, true);
    match key.content::<Filter>() {
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Value(_) => return ctx.reply_error(errors::VALKEY_KEY_EXISTS),
        KeyContent::Empty => {}
    }
    let filter = match valkey_load::decode(a.get(2)) {
        Err(LoadError::Version) => return ctx.reply_error(errors::VALKEY_UNSUPPORTED_VERSION),
        Err(LoadError::Invalid(_)) => return ctx.reply_error(errors::VALKEY_DECODING_FAILED),
        Ok(filter) => filter,
    };
    let limit = config::max_filter_bytes();
    if filter.bit_bytes() > limit {
        return ctx.reply_error(&errors::too_large(filter.bit_bytes(), limit));
    }
    key.create(Filter::from(filter));
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"bf.load", a, 1);
}
