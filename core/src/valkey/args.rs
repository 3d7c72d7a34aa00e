//! valkey-bloom's own words of `BF.INSERT`: `TIGHTENING t` and `SEED s`, which valkey-bloom
//! writes to its replicas and its AOF for every filter it creates, and which rsbloom takes only
//! from them (from a client they are unknown arguments, as in valkey-bloom). `BF.INSERT`'s
//! parser (`bloom/args.rs`) hands them here.

use crate::args::{double, is, Refusal};
use crate::errors;
use crate::valkey::filter::SEED_BYTES;

/// valkey-bloom's options of one replayed `BF.INSERT`, which create a valkey-bloom filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValkeyOptions {
    /// The tightening ratio (valkey-bloom's default 0.5 when only SEED is given).
    pub tightening: f64,
    /// The 32-byte seed; None when only TIGHTENING is given (valkey-bloom draws one).
    pub seed: Option<[u8; SEED_BYTES]>,
}

/// valkey-bloom's default tightening ratio.
pub const VALKEY_TIGHTENING: f64 = 0.5;

/// The valkey-bloom words a replayed `BF.INSERT` gave so far (the last of each wins).
#[derive(Debug, Default)]
pub(crate) struct ValkeyWords {
    tightening: Option<f64>,
    seed: Option<[u8; SEED_BYTES]>,
}

impl ValkeyWords {
    /// Takes `TIGHTENING t` or `SEED s` (`token` is one of the two), or refuses its value with
    /// valkey-bloom's reply.
    pub(crate) fn take(&mut self, token: &[u8], value: &[u8]) -> Result<(), Refusal> {
        if is(token, "SEED") {
            self.seed = Some(
                <[u8; SEED_BYTES]>::try_from(value)
                    .map_err(|_| Refusal::Reply(errors::VALKEY_BAD_SEED))?,
            );
            return Ok(());
        }
        self.tightening = match double(value) {
            None => return Err(Refusal::Reply(errors::VALKEY_BAD_TIGHTENING)),
            Some(t) if !(t > 0.0 && t < 1.0) => {
                return Err(Refusal::Reply(errors::VALKEY_TIGHTENING_RANGE))
            }
            t => t,
        };
        Ok(())
    }

    /// The options, when either word was given.
    pub(crate) fn options(&self) -> Option<ValkeyOptions> {
        (self.tightening.is_some() || self.seed.is_some()).then(|| ValkeyOptions {
            tightening: self.tightening.unwrap_or(VALKEY_TIGHTENING),
            seed: self.seed,
        })
    }
}
