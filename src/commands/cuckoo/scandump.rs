//! CF.SCANDUMP key iterator, CF.LOADCHUNK key iterator data: the incremental dump and restore
//! of a cuckoo filter (format and iterator rules in `rsbloom_core::cuckoo::scandump`).

use crate::commands::{reply_scan, with_value};
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, KeyContent};
use crate::stats::{self, Work};
use rsbloom_core::cuckoo::scandump;
use rsbloom_core::errors::{self, cf};
use rsbloom_core::{args, Cuckoo};

pub fn scandump(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    // RedisBloom checks the iterator before the key.
    let Some(iterator) = args::integer(a.get(2)).filter(|&i| i >= 0) else {
        return ctx.reply_error(cf::INVALID_POSITION);
    };
    with_value(ctx, a, false, |cf: &mut Cuckoo| {
        // RedisBloom's end of a cuckoo dump is a null, not an empty string.
        reply_scan(ctx, scandump::scan(cf, iterator), Ctx::reply_null);
    });
}

pub fn loadchunk(ctx: &Ctx, a: &Args) {
    if a.len() != 4 {
        return ctx.reply_wrong_arity();
    }
    // RedisBloom opens the key first, then checks the iterator, whatever the key holds.
    let mut key = ctx.open_key(a, 1, true);
    let iterator = match args::integer(a.get(2)) {
        Some(i) if i != 0 => i,
        _ => return ctx.reply_error(cf::INVALID_POSITION),
    };
    let data = a.get(3);
    if iterator == 1 {
        match key.content::<Cuckoo>() {
            KeyContent::Value(_) => return ctx.reply_error(errors::ITEM_EXISTS),
            KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
            KeyContent::Empty => {}
        }
        match scandump::filter_from_header(data, config::max_filter_bytes()) {
            Ok(cf) => {
                key.create(cf);
            }
            Err(e) => return ctx.reply_error(&errors::cuckoo_dump_error(&e, true)),
        }
    } else {
        let cf = match key.value::<Cuckoo>() {
            Ok(cf) => cf,
            Err(text) => return ctx.reply_error(text),
        };
        let before = cf.gauges();
        if let Err(e) = scandump::load_chunk(cf, iterator, data) {
            return ctx.reply_error(&errors::cuckoo_dump_error(&e, false));
        }
        stats::CUCKOO.value_changed(before, cf.gauges(), Work::default());
    }
    ctx.reply_ok();
    // rsbloom: chunks too (RedisBloom replicates only the header, so its replicas and AOF
    // lose the data).
    ctx.replicate_verbatim();
    ctx.notify(c"cf.loadchunk", a, 1);
}
