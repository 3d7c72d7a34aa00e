//! The BF.* and CF.* commands, on top of the Redis wrapper ([`crate::ffi`]) and the core.
//! Both kinds have the same shape: one folder each ([`bloom`], [`cuckoo`]), one file per
//! command family (`add`, `exists`, `reserve`, `info`, `debug`, `scandump`; cuckoo filters add
//! `delete`). What both share is here: the one create path, the reply to a refused argument
//! list, the random seed. The table of names, flags, key specs and docs is [`table`].

pub mod bloom;
pub mod cuckoo;
pub mod table;

use std::ffi::CStr;
use std::io::Read;

use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Key, KeyContent, Word};
use rsbloom_core::args::Refusal;
use rsbloom_core::bulk::{self, BulkWords, Items};
use rsbloom_core::errors;
use rsbloom_core::scandump::Scan;

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

/// Stores the new `value` in the empty key `a[1]` and replicates its creation in the explicit
/// form `reserve key words...` (`BF.RESERVE` / `CF.RESERVE` with every parameter and the
/// seed), so a replica or an AOF replay builds identical bits whatever its own defaults are.
pub fn create<'k, T: Stored>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    value: T,
    reserve: &CStr,
    words: &[String],
) -> &'k mut T {
    let argv: Vec<Word> = std::iter::once(Word::Arg(1))
        .chain(words.iter().map(|w| Word::Text(w)))
        .collect();
    ctx.replicate(reserve, a, &argv);
    key.create(value)
}

/// The words and items of a bulk command (`<command> key [words…] blob`) and an empty buffer
/// for its answers (a byte per item), or the reply sent when they are refused; `window` says
/// whether `AT` and `NOREFRESH` are taken. The buffer is asked for here, before anything
/// changes, and a refusal is an error reply: an abort on a large blob would take the server.
pub fn bulk_items<'a>(
    ctx: &Ctx,
    a: &'a Args,
    command: &str,
    window: bool,
) -> Option<(BulkWords, Items<'a>, Vec<u8>)> {
    let words = match bulk::words(&a.to_vec(), command, window) {
        Ok(words) => words,
        Err(refusal) => {
            refuse(ctx, refusal);
            return None;
        }
    };
    let items = match bulk::items(a.get(a.len() - 1), words.framed) {
        Ok(items) => items,
        Err(e) => {
            ctx.reply_error(&e.reply());
            return None;
        }
    };
    let mut answers = Vec::new();
    if answers.try_reserve_exact(items.len()).is_err() {
        ctx.reply_error(errors::BULK_OUT_OF_MEMORY);
        return None;
    }
    Some((words, items, answers))
}

/// The reply to a refused argument list.
pub fn refuse(ctx: &Ctx, refusal: Refusal) {
    match refusal {
        Refusal::Arity => ctx.reply_wrong_arity(),
        Refusal::Reply(text) => ctx.reply_error(text),
        Refusal::Named(text) => ctx.reply_error(&text),
    }
}

/// A `*.RESERVE` whose arguments parsed: `ERR item exists` when the key holds a filter of this
/// kind, WRONGTYPE for another type; otherwise `create` builds the filter in the empty key (or
/// returns the error text to reply), and the reply is OK with the keyspace event `event`.
pub fn reserve<T: Stored>(
    ctx: &Ctx,
    a: &Args,
    event: &CStr,
    create: impl FnOnce(&mut Key) -> Result<(), String>,
) {
    let mut key = ctx.open_key(a, 1, true);
    match key.content::<T>() {
        KeyContent::Value(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Empty => {}
    }
    match create(&mut key) {
        Err(text) => ctx.reply_error(&text),
        Ok(()) => {
            ctx.reply_ok();
            ctx.notify(event, a, 1);
        }
    }
}

/// Hands the filter at `a[1]` to `reply`, for the commands that need an existing one; a
/// missing key (`ERR not found`) or another type (WRONGTYPE) gets its error reply instead.
pub fn with_value<T: Stored>(ctx: &Ctx, a: &Args, write: bool, reply: impl FnOnce(&mut T)) {
    let mut key = ctx.open_key(a, 1, write);
    match key.value::<T>() {
        Ok(value) => reply(value),
        Err(text) => ctx.reply_error(text),
    }
}

/// Hands the filter at `a[1]` to a reader, `None` for a missing key; another type gets
/// WRONGTYPE, as from every Redis command (RedisBloom reads it as empty).
pub fn with_optional<T: Stored>(ctx: &Ctx, a: &Args, reply: impl FnOnce(Option<&mut T>)) {
    let mut key = ctx.open_key(a, 1, false);
    match key.content::<T>() {
        KeyContent::Empty => reply(None),
        KeyContent::Value(value) => reply(Some(value)),
        KeyContent::Other => ctx.reply_error(errors::WRONG_TYPE),
    }
}

/// One SCANDUMP step's reply, `[iterator, data]`, for either kind; `end` replies the data of
/// the last step (`[0, end]`: RedisBloom's is an empty string for a Bloom filter, a null for a
/// cuckoo filter).
pub fn reply_scan(ctx: &Ctx, scan: Scan, end: fn(&Ctx)) {
    ctx.reply_array(2);
    match scan {
        Scan::Header(header) => {
            ctx.reply_integer(1);
            ctx.reply_bulk(&header);
        }
        Scan::Chunk { next, data } => {
            ctx.reply_integer(next);
            ctx.reply_bulk(&data);
        }
        Scan::End => {
            ctx.reply_integer(0);
            end(ctx);
        }
    }
}
