//! The BF.* and CF.* commands, on top of the Redis wrapper ([`crate::redis`]) and the core.
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
use crate::redis::{Args, Ctx, Key, Word};
use rsbloom_core::args::Refusal;

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

/// The reply to a refused argument list.
pub fn refuse(ctx: &Ctx, refusal: Refusal) {
    match refusal {
        Refusal::Arity => ctx.reply_wrong_arity(),
        Refusal::Reply(text) => ctx.reply_error(text),
    }
}
