//! `CF.ADD / CF.ADDNX key item`; `CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS ...`

use super::create;
use crate::commands::refuse;
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Key, KeyContent, Word};
use crate::stats::{self, Work};
use rsbloom_core::cuckoo::args;
use rsbloom_core::errors::{self, cf};
use rsbloom_core::{Cuckoo, CuckooSpec};

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
    insert_items(ctx, a, kind, 2, Some(add_defaults()));
}

/// What `CF.ADD` (and `CF.BULKADD`) creates in a missing key: the module defaults, the
/// expansion as stored.
pub(super) fn add_defaults() -> CuckooSpec {
    let defaults = config::cuckoo_defaults();
    CuckooSpec {
        expansion: CuckooSpec::stored_expansion(defaults.expansion),
        ..defaults
    }
}

/// The filter an insert goes to: the key's, or one created as `create_as` says; None when the
/// insert is refused (the reply sent): another type, a missing key without `create_as`
/// (`ERR not found`), a creation the limits refuse, or a filter at the sub-filter limit
/// (RedisBloom's check, once, before any item).
pub(super) fn filter_to_insert_into<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    create_as: Option<CuckooSpec>,
    max_filters: usize,
) -> Option<&'k mut Cuckoo> {
    let refuse_with = |text: &str| {
        ctx.reply_error(text);
        None
    };
    // Asked first, so that the borrow of the value below is the one returned.
    let cf = if key.is_empty() {
        let Some(spec) = create_as else {
            return refuse_with(errors::NOT_FOUND);
        };
        // The new filter's one sub-filter would already be the limit: create nothing.
        if max_filters <= 1 {
            return refuse_with(cf::MAX_EXPANSIONS);
        }
        match create(ctx, a, key, &spec, None) {
            Ok(cf) => cf,
            Err(text) => return refuse_with(&text),
        }
    } else {
        match key.content::<Cuckoo>() {
            KeyContent::Value(cf) => cf,
            _ => return refuse_with(errors::WRONG_TYPE),
        }
    };
    if cf.filter_count() >= max_filters {
        return refuse_with(cf::MAX_EXPANSIONS);
    }
    Some(cf)
}

fn multi(ctx: &Ctx, a: &Args, kind: Command) {
    match args::insert(&a.to_vec(), config::cuckoo_defaults()) {
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
    let Some(cf) = filter_to_insert_into(ctx, a, &mut key, create_as, max_filters) else {
        return;
    };
    let limit = config::max_filter_bytes();
    let before = cf.gauges();
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
                    Command::Add | Command::AddNx => {
                        ctx.reply_error(&errors::cuckoo_insert_error(&e))
                    }
                    // Asked only here: GetContextFlags computes every flag of the context.
                    Command::Insert if ctx.is_resp3() => ctx.reply_bool(false),
                    Command::Insert | Command::InsertNx => ctx.reply_integer(-1),
                }
            }
        }
    });
    let work = Work {
        added,
        refused: refused.len() as u64,
        ..Work::default()
    };
    stats::CUCKOO.value_changed(before, cf.gauges(), work);
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
