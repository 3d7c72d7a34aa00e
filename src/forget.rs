//! Caching clients are told when a time window forgets. A time window's answers change with
//! the clock, without a write, so Redis would never invalidate a client's cached `BF.EXISTS`
//! (RESP3 `CLIENT TRACKING`, which redis-py, Lettuce and node-redis use for client-side
//! caching). So every read of a time window of the rotating layout notes when its oldest
//! generation that holds items leaves the window ([`Rotating::next_forget`]); one module timer
//! fires at the earliest such moment and signals each due key modified, which sends the
//! invalidation to every client tracking it, within one generation of its items' expiry.
//! [`Rotating::note_read`] keeps the usual read at one load and one comparison.
//!
//! Nothing is written: the primary's and the replicas' data stay identical, and a replica's
//! readers are told by the replica's own timer. A key is noted once per moment (the filter
//! remembers the moment it was noted for), so a read costs one comparison after the first;
//! a key nobody reads again is not noted again. A key deleted, renamed or replaced meanwhile
//! is found not to be the noted filter when the timer fires, and skipped.

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::ffi::{Args, Ctx, KeyContent, OwnedString, Timer};
use rsbloom_core::window::rotating::Rotating;
use rsbloom_core::Filter;

/// A key due for a signal: when (Unix ms), its database and its name.
type Due = (u64, i32, Vec<u8>);

struct Schedule {
    due: BTreeSet<Due>,
    /// The armed timer and the moment it fires at.
    timer: Option<(Timer, u64)>,
}

static SCHEDULE: Mutex<Schedule> = Mutex::new(Schedule {
    due: BTreeSet::new(),
    timer: None,
});

/// Notes that the reader of `filter` (at `a[key]`) at server time `now` must be told when it
/// next forgets.
pub fn note_read(ctx: &Ctx, a: &Args, key: usize, filter: &Filter, now: u64) {
    let Filter::Rotating(window) = filter else {
        return;
    };
    note(ctx, a.get(key), window, now);
}

fn note(ctx: &Ctx, name: &[u8], window: &Rotating, now: u64) {
    let Some(at) = window.note_read(now) else {
        return;
    };
    let mut schedule = SCHEDULE.lock().unwrap_or_else(|e| e.into_inner());
    schedule.due.insert((at, ctx.selected_db(), name.to_vec()));
    arm(ctx, &mut schedule, now);
}

/// Arms the timer for the earliest due key, unless it is armed for that moment or earlier.
fn arm(ctx: &Ctx, schedule: &mut Schedule, now: u64) {
    let Some(&(first, _, _)) = schedule.due.first() else {
        return;
    };
    if schedule.timer.is_some_and(|(_, at)| at <= first) {
        return;
    }
    if let Some((timer, _)) = schedule.timer.take() {
        ctx.stop_timer(timer);
    }
    let delay = first.saturating_sub(now).max(1);
    schedule.timer = Some((ctx.start_timer(delay, fire), first));
}

/// The timer: signals every due key whose filter is still the one noted, then arms the timer
/// for the next.
fn fire(ctx: &Ctx) {
    let now = ctx.now_ms();
    let due: Vec<Due> = {
        let mut schedule = SCHEDULE.lock().unwrap_or_else(|e| e.into_inner());
        schedule.timer = None;
        let later = schedule.due.split_off(&(now + 1, i32::MIN, Vec::new()));
        std::mem::replace(&mut schedule.due, later)
            .into_iter()
            .collect()
    };
    for (at, db, name) in due {
        if !ctx.select_db(db) {
            continue;
        }
        let name = OwnedString::new(&name);
        let mut key = ctx.open_key_named(&name);
        if let KeyContent::Value(Filter::Rotating(window)) = key.content::<Filter>() {
            if window.unwatch(at) {
                drop(key);
                ctx.signal_modified(&name);
            }
        }
    }
    let mut schedule = SCHEDULE.lock().unwrap_or_else(|e| e.into_inner());
    arm(ctx, &mut schedule, now);
}
