//! The BF.* and CF.* commands, one file per family (`cuckoo` holds every CF command), on top of the Redis wrapper ([`crate::redis`]) and
//! the core. The table of names, flags, key specs and docs is [`table`].

pub mod add;
pub mod create;
pub mod cuckoo;
pub mod debug;
pub mod exists;
pub mod info;
pub mod reserve;
pub mod scandump;
pub mod table;

use rsbloom_core::errors;
use rsbloom_core::ChainError;

/// The reply text of a chain error.
pub fn chain_error_text(e: &ChainError) -> String {
    match e {
        ChainError::Full => errors::FULL.to_string(),
        ChainError::TooLarge { needed, limit } => errors::too_large(*needed, *limit),
        ChainError::LinkTooLarge { needed } => errors::link_too_large(*needed),
        ChainError::CannotGrow => errors::CANNOT_GROW.to_string(),
        ChainError::WindowFull => errors::WINDOW_FULL.to_string(),
    }
}
