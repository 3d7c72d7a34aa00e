//! The CF.* commands: cuckoo filters, RedisBloom's syntax, replies and error texts (the rules
//! are `core::cuckoo`'s; the dump format `core::cuckoo_scandump`'s).
//!
//! - CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [SEED s]
//! - CF.ADD / CF.ADDNX key item; CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS ...
//! - CF.EXISTS key item; CF.MEXISTS key item ...; CF.COUNT key item
//! - CF.DEL key item; CF.COMPACT key
//! - CF.INFO key; CF.DEBUG key
//! - CF.SCANDUMP key iterator; CF.LOADCHUNK key iterator data
//!
//! Every filter rsbloom creates gets a random hash seed, and the creation is replicated as
//! `CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS m EXPANSION e SEED s`, so a replica or an
//! AOF replay holds the same slots. Where RedisBloom misbehaves (crashes, lost chunks, WRONGTYPE
//! read as empty) rsbloom differs, as the README lists.

use super::create::random_seed;
use crate::redis::{Args, Ctx, Key, KeyContent, Word};
use crate::{config, stats};
use rsbloom_core::args::{self, Refusal};
use rsbloom_core::cuckoo::scandump::{self as cuckoo_scandump, HeaderError};
use rsbloom_core::errors::{self, cf};
use rsbloom_core::{Cuckoo, CuckooError, CuckooSpec};

/// The reply to a refused argument list.
fn refuse(ctx: &Ctx, refusal: Refusal) {
    match refusal {
        Refusal::Arity => ctx.reply_wrong_arity(),
        Refusal::Reply(text) => ctx.reply_error(text),
    }
}

/// The reply text of a refused insert (CF.ADD / CF.ADDNX; in the arrays every refusal is -1).
fn insert_error_text(e: &CuckooError) -> String {
    match e {
        CuckooError::Full => cf::FULL.to_string(),
        CuckooError::MaxFilters => cf::MAX_EXPANSIONS.to_string(),
        CuckooError::TooLarge { needed, limit } => errors::too_large(*needed, *limit),
        CuckooError::Insufficient => cf::INSUFFICIENT_MEMORY.to_string(),
    }
}

/// The reply text of a refused creation.
fn create_error_text(e: &CuckooError) -> String {
    match e {
        CuckooError::TooLarge { needed, limit } => errors::too_large(*needed, *limit),
        _ => cf::INSUFFICIENT_MEMORY_CREATE.to_string(),
    }
}

/// Creates `spec` in the empty key `a[1]` with `seed` (random when `None`), replicating the
/// creation in its explicit form.
fn create<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    spec: &CuckooSpec,
    seed: Option<u64>,
) -> Result<&'k mut Cuckoo, String> {
    // Seed 0 means RedisBloom's public hash: a random seed never is.
    let seed = seed.unwrap_or_else(|| random_seed().max(1));
    let cf =
        Cuckoo::new(spec, seed, config::max_filter_bytes()).map_err(|e| create_error_text(&e))?;
    let words = args::cuckoo_reserve_words(spec, seed);
    let argv: Vec<Word> = std::iter::once(Word::Arg(1))
        .chain(words.iter().map(|w| Word::Text(w)))
        .collect();
    ctx.replicate(c"CF.RESERVE", a, &argv);
    Ok(key.create(cf))
}

pub fn reserve(ctx: &Ctx, a: &Args) {
    let r = match args::cuckoo_reserve(&a.to_vec()) {
        Ok(r) => r,
        Err(refusal) => return refuse(ctx, refusal),
    };
    let mut key = ctx.open_key(a, 1, true);
    match key.content::<Cuckoo>() {
        KeyContent::Value(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Empty => {}
    }
    match create(ctx, a, &mut key, &r.spec, r.seed) {
        Err(text) => ctx.reply_error(&text),
        Ok(_) => {
            ctx.reply_ok();
            ctx.notify(c"cf.reserve", a, 1);
        }
    }
}

/// Which insert command runs: its reply shapes and whether it skips present items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Add,
    AddNx,
    Insert,
    InsertNx,
}

impl Command {
    fn nx(self) -> bool {
        matches!(self, Command::AddNx | Command::InsertNx)
    }
    fn multi(self) -> bool {
        matches!(self, Command::Insert | Command::InsertNx)
    }
}

pub fn add(ctx: &Ctx, a: &Args) {
    single(ctx, a, Command::Add);
}

pub fn addnx(ctx: &Ctx, a: &Args) {
    single(ctx, a, Command::AddNx);
}

pub fn insert(ctx: &Ctx, a: &Args) {
    multi(ctx, a, Command::Insert);
}

pub fn insertnx(ctx: &Ctx, a: &Args) {
    multi(ctx, a, Command::InsertNx);
}

fn single(ctx: &Ctx, a: &Args, kind: Command) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let spec = CuckooSpec::implicit(CuckooSpec::DEFAULT_CAPACITY);
    insert_items(ctx, a, kind, 2, Some(spec));
}

fn multi(ctx: &Ctx, a: &Args, kind: Command) {
    match args::cuckoo_insert(&a.to_vec()) {
        Ok(i) => insert_items(ctx, a, kind, i.first_item, i.create),
        Err(refusal) => refuse(ctx, refusal),
    }
}

/// Inserts `a[first..]` into the filter at `a[1]`, creating it as `create_as` says when the key
/// is missing (`ERR not found` without). RedisBloom's sub-filter limit is checked once, before
/// any item (a whole-command error); rsbloom also refuses, item by item, any growth past it, so
/// one command cannot grow a filter without bound.
fn insert_items(ctx: &Ctx, a: &Args, kind: Command, first: usize, create_as: Option<CuckooSpec>) {
    let max_filters = config::cf_max_expansions();
    let mut key = ctx.open_key(a, 1, true);
    let cf = match key.content::<Cuckoo>() {
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Value(cf) => cf,
        KeyContent::Empty => {
            let Some(spec) = create_as else {
                return ctx.reply_error(errors::NOT_FOUND);
            };
            // The new filter's one sub-filter would already be the limit: create nothing.
            if max_filters <= 1 {
                return ctx.reply_error(cf::MAX_EXPANSIONS);
            }
            match create(ctx, a, &mut key, &spec, None) {
                Ok(cf) => cf,
                Err(text) => return ctx.reply_error(&text),
            }
        }
    };
    if cf.filter_count() >= max_filters {
        return ctx.reply_error(cf::MAX_EXPANSIONS);
    }
    let limit = config::max_filter_bytes();
    let before = gauges(cf);
    if kind.multi() {
        ctx.reply_array(a.len() - first);
    }
    let (mut added, mut refused) = (0u64, Vec::new());
    let mut at = first;
    cf.for_each_ahead((first..a.len()).map(|i| a.get(i)), |cf, hash| {
        let i = at;
        at += 1;
        if kind.nx() && cf.contains(hash) {
            // INSERTNX answers integers in RESP3 too.
            if kind == Command::InsertNx {
                ctx.reply_integer(0);
            } else {
                ctx.reply_bool(false);
            }
            return;
        }
        match cf.insert(hash, max_filters, limit) {
            Ok(_) => {
                added += 1;
                match kind {
                    Command::InsertNx => ctx.reply_integer(1),
                    _ => ctx.reply_bool(true),
                }
            }
            Err(e) => {
                refused.push(i);
                match kind {
                    Command::Add | Command::AddNx => ctx.reply_error(&insert_error_text(&e)),
                    // Asked only here: GetContextFlags computes every flag of the context.
                    Command::Insert if ctx.is_resp3() => ctx.reply_bool(false),
                    Command::Insert | Command::InsertNx => ctx.reply_integer(-1),
                }
            }
        }
    });
    stats::cuckoo_changed(before, gauges(cf), added, 0, refused.len() as u64);
    replicate_applied(ctx, a, kind, first, &refused);
    ctx.notify(
        if kind.multi() {
            c"cf.insert"
        } else {
            c"cf.add"
        },
        a,
        1,
    );
}

/// Replicates what an insert applied: the command as received when no item was refused;
/// otherwise `CF.INSERT[NX] key NOCREATE ITEMS <the others>` (or nothing for none), so that a
/// replica whose own limits differ applies exactly the primary's changes and never meets a
/// refusal the primary met. A refused item changed nothing.
fn replicate_applied(ctx: &Ctx, a: &Args, kind: Command, first: usize, refused: &[usize]) {
    if refused.is_empty() {
        return ctx.replicate_verbatim();
    }
    let taken: Vec<Word> = (first..a.len())
        .filter(|i| !refused.contains(i))
        .map(Word::Arg)
        .collect();
    if taken.is_empty() {
        return;
    }
    let command = if kind.nx() {
        c"CF.INSERTNX"
    } else {
        c"CF.INSERT"
    };
    let argv: Vec<Word> = [Word::Arg(1), Word::Text("NOCREATE"), Word::Text("ITEMS")]
        .into_iter()
        .chain(taken)
        .collect();
    ctx.replicate(command, a, &argv);
}

/// The filter at `a[1]` for a reader: `None` when the key is missing, WRONGTYPE (replied, as
/// every Redis command does; RedisBloom reads another type as empty) for another type.
fn read<'k>(ctx: &Ctx, key: &'k mut Key) -> Result<Option<&'k mut Cuckoo>, ()> {
    match key.content::<Cuckoo>() {
        KeyContent::Empty => Ok(None),
        KeyContent::Value(cf) => Ok(Some(cf)),
        KeyContent::Other => {
            ctx.reply_error(errors::WRONG_TYPE);
            Err(())
        }
    }
}

pub fn exists(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    stats::cuckoo_checks(1);
    ctx.reply_bool(cf.is_some_and(|cf| cf.contains(cf.hash(a.get(2)))));
}

pub fn mexists(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    let n = a.len() - 2;
    stats::cuckoo_checks(n as u64);
    ctx.reply_array(n);
    match cf {
        Some(cf) => cf.contains_many((2..a.len()).map(|i| a.get(i)), |present| {
            ctx.reply_bool(present)
        }),
        None => (0..n).for_each(|_| ctx.reply_bool(false)),
    }
}

pub fn count(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    stats::cuckoo_checks(1);
    let n = cf.map_or(0, |cf| cf.count(cf.hash(a.get(2))));
    ctx.reply_integer(n as i64);
}

/// The filter at `a[1]` for CF.DEL and CF.COMPACT, which answer a missing key with their own
/// text (`missing`) and another type with WRONGTYPE; `None` once the error is replied.
fn existing<'k>(ctx: &Ctx, key: &'k mut Key, missing: &str) -> Option<&'k mut Cuckoo> {
    match key.content::<Cuckoo>() {
        KeyContent::Value(cf) => Some(cf),
        KeyContent::Empty => {
            ctx.reply_error(missing);
            None
        }
        KeyContent::Other => {
            ctx.reply_error(errors::WRONG_TYPE);
            None
        }
    }
}

/// What the INFO gauges follow of a filter: its slot bytes and items.
fn gauges(cf: &Cuckoo) -> (u64, u64) {
    (cf.slot_bytes(), cf.items())
}

pub fn del(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, true);
    let Some(cf) = existing(ctx, &mut key, cf::DEL_NOT_FOUND) else {
        return;
    };
    let before = gauges(cf);
    let deleted = cf.delete(cf.hash(a.get(2)));
    stats::cuckoo_changed(before, gauges(cf), 0, u64::from(deleted), 0);
    ctx.reply_bool(deleted);
    ctx.replicate_verbatim();
    ctx.notify(c"cf.del", a, 1);
}

pub fn compact(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, true);
    let Some(cf) = existing(ctx, &mut key, cf::COMPACT_NOT_FOUND) else {
        return;
    };
    let before = gauges(cf);
    cf.compact();
    stats::cuckoo_changed(before, gauges(cf), 0, 0, 0);
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"cf.compact", a, 1);
}

pub fn info(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let cf = match key.value::<Cuckoo>() {
        Ok(cf) => cf,
        Err(text) => return ctx.reply_error(text),
    };
    let fields: [(&std::ffi::CStr, i64); 8] = [
        (c"Size", cf.memory_usage() as i64),
        (c"Number of buckets", cf.buckets() as i64),
        (c"Number of filters", cf.filter_count() as i64),
        // Signed, as RedisBloom replies it: -1 after an underflow.
        (c"Number of items inserted", cf.items() as i64),
        (c"Number of items deleted", cf.deletes() as i64),
        (c"Bucket size", i64::from(cf.bucket_size())),
        (c"Expansion rate", i64::from(cf.expansion())),
        (c"Max iterations", i64::from(cf.max_iterations())),
    ];
    ctx.reply_map(fields.len());
    for (name, value) in fields {
        ctx.reply_simple_string(name);
        ctx.reply_integer(value);
    }
}

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let cf = match key.value::<Cuckoo>() {
        Ok(cf) => cf,
        Err(text) => return ctx.reply_error(text),
    };
    let line = format!(
        "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
        cf.bucket_size(),
        cf.buckets(),
        cf.items(),
        cf.deletes(),
        cf.filter_count(),
        cf.max_iterations(),
        cf.expansion()
    );
    ctx.reply_bulk(line.as_bytes());
}

pub fn scandump(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    // RedisBloom checks the iterator before the key.
    let Some(iterator) = args::integer(a.get(2)).and_then(|i| u64::try_from(i).ok()) else {
        return ctx.reply_error(cf::INVALID_POSITION);
    };
    let mut key = ctx.open_key(a, 1, false);
    let cf = match key.value::<Cuckoo>() {
        Ok(cf) => cf,
        Err(text) => return ctx.reply_error(text),
    };
    ctx.reply_array(2);
    // RedisBloom dumps nothing of a filter with no items, at any iterator.
    if cf.items() == 0 {
        ctx.reply_integer(0);
        return ctx.reply_null();
    }
    if iterator == 0 {
        ctx.reply_integer(1);
        return ctx.reply_bulk(&cuckoo_scandump::header(cf));
    }
    match cuckoo_scandump::scan(cf, iterator) {
        Some((next, chunk)) => {
            ctx.reply_integer(next as i64);
            ctx.reply_bulk(chunk);
        }
        None => {
            ctx.reply_integer(0);
            ctx.reply_null();
        }
    }
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
        match cuckoo_scandump::filter_from_header(data, config::max_filter_bytes()) {
            Ok(cf) => {
                key.create(cf);
            }
            Err(HeaderError::Length) => return ctx.reply_error(cf::INVALID_HEADER),
            Err(HeaderError::Invalid(_)) => return ctx.reply_error(cf::CANNOT_CREATE),
            Err(HeaderError::TooLarge { needed, limit }) => {
                return ctx.reply_error(&errors::too_large(needed, limit))
            }
        }
    } else {
        let cf = match key.value::<Cuckoo>() {
            Ok(cf) => cf,
            Err(text) => return ctx.reply_error(text),
        };
        let before = gauges(cf);
        if cuckoo_scandump::load_chunk(cf, iterator, data).is_err() {
            return ctx.reply_error(cf::CANNOT_LOAD_CHUNK);
        }
        stats::cuckoo_changed(before, gauges(cf), 0, 0, 0);
    }
    ctx.reply_ok();
    // rsbloom: chunks too (RedisBloom replicates only the header, so its replicas and AOF
    // lose the data).
    ctx.replicate_verbatim();
    ctx.notify(c"cf.loadchunk", a, 1);
}
