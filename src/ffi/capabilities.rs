//! What the server offers, found at load time by what it exposes (an API function present, an
//! INFO field, a server event it knows), never by comparing version numbers: Valkey reports
//! `redis_version:7.2.4` and its own version through the module API.

use std::ffi::{c_int, CStr};

use redis_module::raw;

/// Valkey's `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION`: the module handles keys
/// loaded during a `CLUSTER MIGRATESLOTS` before their slot's ownership moves. Redis may give
/// the same bit another meaning, so it is declared only to a Valkey that knows the feature.
const VALKEY_OPTION_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// Valkey's `VALKEYMODULE_EVENT_ATOMIC_SLOT_MIGRATION`: a server that knows this event knows the
/// option above. (Valkey 9.1.2's `IsSubEventSupported` does not list it; subscribing does.)
const VALKEY_EVENT_ATOMIC_SLOT_MIGRATION: u64 = 19;

extern "C" fn ignore_event(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut std::ffi::c_void,
) {
}

/// Whether the server accepts a subscription to server event `id` (it refuses events it does
/// not know); the subscription is dropped again at once.
fn knows_server_event(ctx: *mut raw::RedisModuleCtx, id: u64) -> bool {
    // SAFETY: see `info_field`.
    let Some(subscribe) = (unsafe { raw::RedisModule_SubscribeToServerEvent }) else {
        return false;
    };
    let event = raw::RedisModuleEvent { id, dataver: 1 };
    // SAFETY: OnLoad's live context and a callback of the signature Redis expects; a NULL
    // callback removes the subscription.
    unsafe {
        let known = subscribe(ctx, event, Some(ignore_event)) == raw::Status::Ok as c_int;
        if known {
            subscribe(ctx, event, None);
        }
        known
    }
}

/// The server's capabilities that rsbloom uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// `server_name` of INFO server (`valkey`), or `redis` when the field is absent.
    pub server: String,
    /// The server's own version: `valkey_version` on Valkey, `redis_version` elsewhere.
    pub version: String,
    /// `RedisModule_SetCommandACLCategories` (Redis 7.2, Valkey): commands get `@read`,
    /// `@write` and `@fast`.
    pub acl_categories: bool,
    /// `RedisModule_AddACLCategory` (Redis 7.4, Valkey 8): commands also get `@bloom`.
    pub bloom_category: bool,
    /// A Valkey with atomic slot migration, to which rsbloom declares that it handles it.
    pub atomic_slot_migration: bool,
}

/// Reads the field `name` of an INFO section through the module API.
fn info_field(ctx: *mut raw::RedisModuleCtx, section: &CStr, name: &CStr) -> Option<String> {
    // SAFETY: a read of the API table, which RedisModule_Init filled before OnLoad went on and
    // nothing writes again; OnLoad runs on the main thread.
    let (get, field, free) = unsafe {
        (
            raw::RedisModule_GetServerInfo?,
            raw::RedisModule_ServerInfoGetFieldC?,
            raw::RedisModule_FreeServerInfo?,
        )
    };
    // SAFETY: OnLoad's live context and a NUL-terminated section name.
    let info = unsafe { get(ctx, section.as_ptr()) };
    if info.is_null() {
        return None;
    }
    // SAFETY: `info` is the live data GetServerInfo returned; the field's text stays valid
    // until FreeServerInfo, and is copied before.
    let value = unsafe {
        let text = field(info, name.as_ptr());
        (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
    };
    // SAFETY: `info` came from GetServerInfo and is freed once.
    unsafe { free(ctx, info) };
    value
}

/// Finds the server's capabilities. Call from OnLoad, after `RedisModule_Init`.
// `ctx` is only passed on to Redis, which requires OnLoad's live context.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn detect(ctx: *mut raw::RedisModuleCtx) -> Capabilities {
    let server = info_field(ctx, c"server", c"server_name").unwrap_or_else(|| "redis".into());
    let version = info_field(ctx, c"server", c"valkey_version")
        .or_else(|| info_field(ctx, c"server", c"redis_version"))
        .unwrap_or_default();
    // SAFETY: see `info_field`.
    let (set_categories, add_category) = unsafe {
        (
            raw::RedisModule_SetCommandACLCategories,
            raw::RedisModule_AddACLCategory,
        )
    };
    Capabilities {
        atomic_slot_migration: server == "valkey"
            && knows_server_event(ctx, VALKEY_EVENT_ATOMIC_SLOT_MIGRATION),
        server,
        version,
        acl_categories: set_categories.is_some(),
        bloom_category: add_category.is_some(),
    }
}

impl Capabilities {
    /// The module options to declare: Redis's I/O error handling (so that `rdb_load` sees a
    /// read error instead of the server exiting mid-load), and atomic slot migration where the
    /// server is a Valkey that has it. rsbloom qualifies: a filter is one key with no state
    /// outside it, so a key loaded into a slot not owned yet (and dropped if the migration is
    /// cancelled) is like any other; the INFO gauges count it while it exists.
    pub fn module_options(&self) -> c_int {
        let mut options = raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int;
        if self.atomic_slot_migration {
            options |= VALKEY_OPTION_ATOMIC_SLOT_MIGRATION;
        }
        options
    }

    /// A command's ACL categories as the server can take them: `base` (`read`/`write`, and
    /// `fast` for the cheap ones), plus the family's own category (`bloom` for BF.*, `cuckoo`
    /// for CF.*, as Redis 8 names them) where the server lets a module add one; `None` where
    /// commands cannot have categories (Redis 7.0).
    pub fn command_categories(&self, name: &str, base: &str) -> Option<String> {
        if !self.acl_categories {
            return None;
        }
        let family = if name.starts_with("cf.") {
            "cuckoo"
        } else {
            "bloom"
        };
        Some(if self.bloom_category {
            format!("{base} {family}")
        } else {
            base.to_string()
        })
    }
}
