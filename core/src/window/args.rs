//! The window options of `BF.RESERVE` and `BF.INSERT` (`SLIDING`, `WINDOW seconds`) and
//! `BF.INSERT`'s `AT ms`.

use crate::args::{is, unsigned, Refusal};
use crate::errors;
use crate::spec::{FilterSpec, Growth, Window};
use crate::window::common::MAX_CLOCK;
use crate::window::rotating;

/// The window options of BF.RESERVE and BF.INSERT: `SLIDING` or `WINDOW seconds`, and
/// `NOREFRESH`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WindowOptions {
    sliding: bool,
    seconds: Option<u64>,
    norefresh: bool,
}

impl WindowOptions {
    /// Takes `argv[i]` when it is a window option (with its value, for WINDOW), refusing a bad
    /// value or an option given twice; false when it is not one.
    pub(crate) fn parse(&mut self, argv: &[&[u8]], i: usize) -> Result<bool, Refusal> {
        let arg = argv[i];
        let twice = |option| Err(Refusal::Named(errors::given_twice(option)));
        if is(arg, "SLIDING") {
            if self.sliding {
                return twice("SLIDING");
            }
            self.sliding = true;
        } else if is(arg, "WINDOW") {
            if self.seconds.is_some() {
                return twice("WINDOW");
            }
            let seconds = argv
                .get(i + 1)
                .and_then(|v| unsigned(v))
                .filter(|s| (1..=Window::MAX_SECONDS).contains(s))
                .ok_or(Refusal::Reply(errors::BAD_WINDOW))?;
            self.seconds = Some(seconds);
        } else if is(arg, "NOREFRESH") {
            if self.norefresh {
                return twice("NOREFRESH");
            }
            self.norefresh = true;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// Whether `SLIDING` or `WINDOW` was given.
    pub(crate) fn is_set(&self) -> bool {
        self.sliding || self.seconds.is_some()
    }

    /// The window words as given.
    pub(crate) fn words(self, at: Option<u64>) -> WindowWords {
        WindowWords {
            window: match (self.sliding, self.seconds) {
                (true, _) => Some(Window::Count),
                (false, Some(seconds)) => Some(Window::Time { seconds }),
                (false, None) => None,
            },
            at,
            norefresh: self.norefresh,
        }
    }

    /// The spec these options make of the others, or the error for a combination that makes
    /// no sense. `NOREFRESH` makes a window filter's mode; without a window it is left to the
    /// caller (BF.INSERT may add to an existing window).
    pub(crate) fn spec(
        self,
        error: f64,
        capacity: u64,
        growth: Growth,
        expansion_given: bool,
    ) -> Result<FilterSpec, Refusal> {
        let refuse = |text| Err(Refusal::Reply(text));
        let window = match (self.sliding, self.seconds) {
            (true, Some(_)) => return refuse(errors::SLIDING_AND_WINDOW),
            (true, None) if expansion_given => return refuse(errors::SLIDING_EXPANSION),
            (true, None) => Window::Count,
            (false, Some(seconds)) => Window::Time { seconds },
            (false, None) => Window::Unbounded,
        };
        if window != Window::Unbounded && !rotating::design::supports_error(error) {
            return refuse(errors::WINDOW_ERROR_RATE);
        }
        let growth = match (window, growth) {
            (Window::Count, _) => Growth::Fixed,
            // `bf.expandable`'s default is for filters without a window; a time window it
            // creates grows as RedisBloom's default expansion says.
            (Window::Time { .. }, Growth::Expandable) => {
                Growth::Scaling(Growth::FIXED_STORED_EXPANSION)
            }
            _ => growth,
        };
        Ok(FilterSpec {
            error,
            capacity,
            growth,
            window,
            refresh: window == Window::Unbounded || !self.norefresh,
        })
    }
}

/// `BF.INSERT`'s window words, as given: `SLIDING` or `WINDOW s` (the window to create, and the
/// one an existing filter must have), `AT ms` and `NOREFRESH`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WindowWords {
    /// `SLIDING` or `WINDOW s`; None without either.
    pub window: Option<Window>,
    /// `AT`: the Unix time in milliseconds a time window's adds happen at.
    pub at: Option<u64>,
    /// `NOREFRESH`: this call's adds of items the window holds change nothing.
    pub norefresh: bool,
}

impl WindowWords {
    /// Why these words cannot apply to the filter an insert adds to, named and explained;
    /// None when they do. `has` is the window of that filter: the existing filter's, or the
    /// one the insert is about to create; None for a missing key under NOCREATE. Without
    /// window words nothing is refused (RedisBloom's own creation options are ignored on an
    /// existing filter, as RedisBloom does).
    pub fn refusal(&self, has: Option<Window>) -> Option<String> {
        let word = |w: Window| match w {
            Window::Time { seconds } => format!("WINDOW {seconds}"),
            _ => "SLIDING".to_string(),
        };
        let describe = |w: Window| match w {
            Window::Unbounded => "has no window (it was created without SLIDING or WINDOW)".into(),
            Window::Count => "is a count window (SLIDING)".into(),
            Window::Time { seconds } => format!("is a time window (WINDOW {seconds})"),
        };
        match (self.window, has) {
            (Some(w), None) => Some(format!(
                "ERR {} applies only when BF.INSERT creates the filter, and NOCREATE forbids \
                 creating this missing key",
                word(w)
            )),
            (Some(w), Some(has)) if w != has => Some(format!(
                "ERR {} does not apply: the filter exists and {}",
                word(w),
                describe(has)
            )),
            (_, Some(has)) if self.at.is_some() && !matches!(has, Window::Time { .. }) => {
                Some(format!(
                    "ERR AT applies only to time windows (WINDOW seconds): the filter {}",
                    describe(has)
                ))
            }
            (_, Some(Window::Unbounded)) if self.norefresh => Some(format!(
                "ERR NOREFRESH applies only to window filters (SLIDING or WINDOW seconds): the \
                 filter {}",
                describe(Window::Unbounded)
            )),
            _ => None,
        }
    }
}

/// Why an `AT` from a client cannot be taken, named with its unit; None when it can. A time
/// more than `tolerance` ms ahead of the server's clock `now` would move the filter's clock
/// ahead of every other writer's, and every item added up to a window before it would read
/// as forgotten; a time more than one window before the server's clock (or the filter's
/// `clock`, when that is later) would stamp items already forgotten. Both are refused before
/// anything changes: seconds or microseconds given for milliseconds always are. (A write the
/// primary replicates, or the AOF replays, carries the time the primary chose, and is taken.)
pub fn at_refusal(
    at: u64,
    seconds: u64,
    now: u64,
    clock: Option<u64>,
    tolerance: u64,
) -> Option<String> {
    let window = seconds.saturating_mul(1000);
    if at > now.saturating_add(tolerance) {
        return Some(format!(
            "ERR AT {at} is {} ms ahead of the server's clock ({now}), more than \
             bf.at-tolerance ({tolerance} ms): AT takes a Unix time in milliseconds",
            at - now
        ));
    }
    let (whose, reference) = match clock {
        Some(clock) if clock > now => ("filter's", clock),
        _ => ("server's", now),
    };
    (at.saturating_add(window) < reference).then(|| {
        format!(
            "ERR AT {at} is more than one window ({seconds} s) before the {whose} clock \
             ({reference}): its items would be forgotten already; AT takes a Unix time in \
             milliseconds"
        )
    })
}

/// The value of `AT` at `argv[i]`: a Unix time in milliseconds, up to [`MAX_CLOCK`].
pub(crate) fn parse_at(argv: &[&[u8]], i: usize) -> Result<u64, Refusal> {
    argv.get(i)
        .and_then(|v| unsigned(v))
        .filter(|&ms| ms <= MAX_CLOCK)
        .ok_or(Refusal::Reply(errors::BAD_AT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_is_refused_past_the_tolerance_or_a_window_behind() {
        let now = 1_700_000_000_000;
        let day = 86_400;
        let refusal = |at, clock| at_refusal(at, 7 * day, now, clock, 1000);
        // Within the tolerance ahead, within a window behind: taken.
        assert_eq!(refusal(now + 1000, None), None);
        assert_eq!(refusal(now - 7 * day * 1000, None), None);
        assert_eq!(refusal(now - 60_000, Some(now)), None);
        // One millisecond past the tolerance: refused, with the figures.
        assert_eq!(
            refusal(now + 1001, None).unwrap(),
            "ERR AT 1700000001001 is 1001 ms ahead of the server's clock (1700000000000), more \
             than bf.at-tolerance (1000 ms): AT takes a Unix time in milliseconds"
        );
        // Three days ahead (a skewed clock) and microseconds for milliseconds.
        assert!(refusal(now + 3 * day * 1000, Some(now)).is_some());
        assert!(refusal(now * 1000, None).is_some());
        // A wider tolerance takes them.
        assert_eq!(
            at_refusal(now + 3 * day * 1000, 7 * day, now, None, 30 * day * 1000),
            None
        );
        // More than a window before the server's clock, with or without a filter clock:
        // seconds for milliseconds, and AT 0, on a new filter too.
        let behind = refusal(now / 1000, None).unwrap();
        assert!(
            behind.starts_with(
                "ERR AT 1700000000 is more than one window (604800 s) before the \
                 server's clock (1700000000000)"
            ),
            "{behind}"
        );
        assert!(refusal(0, None).is_some());
        assert!(refusal(0, Some(5)).is_some());
        assert!(refusal(now - 7 * day * 1000 - 1, Some(now - 1)).is_some());
        // A filter clock ahead of the server's (a wide tolerance took it) is the reference.
        let ahead_clock = now + 10 * day * 1000;
        let text = refusal(now - 60_000, Some(ahead_clock)).unwrap();
        assert!(
            text.contains("before the filter's clock (1700864000000)"),
            "{text}"
        );
    }

    /// The window options of `line`, then the spec they make of a 1% filter of 1000 items
    /// (expansion 2, or `EXPANSION` given when `expansion_given`).
    fn spec_of(line: &str, expansion_given: bool) -> Result<FilterSpec, Refusal> {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        let mut options = WindowOptions::default();
        let mut i = 0;
        while i < words.len() {
            assert!(options.parse(&words, i)?, "{line}: not a window option");
            i += 1 + usize::from(is(words[i], "WINDOW"));
        }
        options.spec(0.01, 1000, Growth::Scaling(2), expansion_given)
    }

    #[test]
    fn window_options_and_their_errors() {
        let window = |line| spec_of(line, false).map(|s| (s.window, s.growth));
        assert_eq!(window(""), Ok((Window::Unbounded, Growth::Scaling(2))));
        assert_eq!(window("sliding"), Ok((Window::Count, Growth::Fixed)));
        assert_eq!(
            window("WINDOW 60"),
            Ok((Window::Time { seconds: 60 }, Growth::Scaling(2)))
        );
        assert_eq!(
            window("WINDOW 4294967295").map(|w| w.0),
            Ok(Window::Time {
                seconds: Window::MAX_SECONDS
            })
        );
        let refused = |line| spec_of(line, false).err();
        for bad in [
            "WINDOW",
            "WINDOW 0",
            "WINDOW -1",
            "WINDOW 1.5",
            "WINDOW 4294967296",
        ] {
            assert_eq!(
                refused(bad),
                Some(Refusal::Reply(errors::BAD_WINDOW)),
                "{bad}"
            );
        }
        assert_eq!(
            refused("SLIDING WINDOW 5"),
            Some(Refusal::Reply(errors::SLIDING_AND_WINDOW))
        );
        assert_eq!(
            spec_of("SLIDING", true).err(),
            Some(Refusal::Reply(errors::SLIDING_EXPANSION))
        );
        let mut options = WindowOptions::default();
        assert_eq!(options.parse(&[b"NONSCALING"], 0), Ok(false));
        // Given twice: refused by name, whatever the values.
        for (line, word) in [
            ("WINDOW 60 WINDOW 120", "WINDOW"),
            ("WINDOW 60 WINDOW 60", "WINDOW"),
            ("SLIDING sliding", "SLIDING"),
            ("SLIDING NOREFRESH NOREFRESH", "NOREFRESH"),
        ] {
            assert_eq!(
                refused(line),
                Some(Refusal::Named(errors::given_twice(word))),
                "{line}"
            );
        }
        // NOREFRESH is the window's mode; a spec without a window always refreshes.
        let refresh = |line| spec_of(line, false).map(|s| s.refresh);
        assert_eq!(refresh("SLIDING NOREFRESH"), Ok(false));
        assert_eq!(refresh("norefresh WINDOW 60"), Ok(false));
        assert_eq!(refresh("WINDOW 60"), Ok(true));
        assert_eq!(refresh("NOREFRESH"), Ok(true));
    }

    #[test]
    fn window_filters_refuse_rates_they_cannot_honour() {
        let mut options = WindowOptions::default();
        assert_eq!(options.parse(&[b"SLIDING"], 0), Ok(true));
        // The rotating layout's own limit (the first layout's, 3.6e-15, no longer applies:
        // every new window is rotating).
        assert!(options.spec(1e-15, 10, Growth::Fixed, false).is_ok());
        assert!(options.spec(5.6e-16, 10, Growth::Fixed, false).is_ok());
        assert_eq!(
            options.spec(5.5e-16, 10, Growth::Fixed, false),
            Err(Refusal::Reply(errors::WINDOW_ERROR_RATE))
        );
        // A filter without a window takes any rate.
        let plain = WindowOptions::default().spec(1e-300, 10, Growth::Fixed, false);
        assert_eq!(plain.map(|s| s.error), Ok(1e-300));
    }

    #[test]
    fn window_words_that_cannot_apply_are_refused_by_name() {
        let (count, minute) = (Window::Count, Window::Time { seconds: 60 });
        let refusal = |window, at, has: Option<Window>| {
            WindowWords {
                window,
                at,
                norefresh: false,
            }
            .refusal(has)
        };
        // What applies: nothing asked, the same window, AT on a time window.
        assert_eq!(refusal(None, None, Some(Window::Unbounded)), None);
        assert_eq!(refusal(Some(count), None, Some(count)), None);
        assert_eq!(refusal(Some(minute), Some(5), Some(minute)), None);
        assert_eq!(refusal(None, Some(5), Some(minute)), None);
        assert_eq!(
            refusal(None, Some(5), None),
            None,
            "NOCREATE's own not-found"
        );
        let text = |window, at, has| refusal(window, at, has).expect("a refusal");
        assert_eq!(
            text(Some(minute), None, Some(Window::Unbounded)),
            "ERR WINDOW 60 does not apply: the filter exists and has no window (it was \
             created without SLIDING or WINDOW)"
        );
        assert_eq!(
            text(Some(count), None, Some(Window::Time { seconds: 5 })),
            "ERR SLIDING does not apply: the filter exists and is a time window (WINDOW 5)"
        );
        assert!(text(Some(Window::Time { seconds: 61 }), None, Some(minute))
            .starts_with("ERR WINDOW 61 does not apply"));
        assert_eq!(
            text(Some(count), None, None),
            "ERR SLIDING applies only when BF.INSERT creates the filter, and NOCREATE forbids \
             creating this missing key"
        );
        assert_eq!(
            text(None, Some(5), Some(count)),
            "ERR AT applies only to time windows (WINDOW seconds): the filter is a count \
             window (SLIDING)"
        );
        assert!(text(None, Some(5), Some(Window::Unbounded)).starts_with("ERR AT applies only"));
        // NOREFRESH applies to either window, never to a filter without one.
        let norefresh = |has| {
            WindowWords {
                norefresh: true,
                ..WindowWords::default()
            }
            .refusal(has)
        };
        assert_eq!(norefresh(Some(count)), None);
        assert_eq!(norefresh(Some(minute)), None);
        assert_eq!(norefresh(None), None, "NOCREATE's own not-found");
        assert_eq!(
            norefresh(Some(Window::Unbounded)).unwrap(),
            "ERR NOREFRESH applies only to window filters (SLIDING or WINDOW seconds): the \
             filter has no window (it was created without SLIDING or WINDOW)"
        );
    }

    #[test]
    fn at_takes_milliseconds_up_to_the_latest_clock() {
        let at = |v: &str| parse_at(&[b"AT", v.as_bytes()], 1);
        assert_eq!(at("0"), Ok(0));
        assert_eq!(at("1733389200000"), Ok(1_733_389_200_000));
        assert_eq!(at(&MAX_CLOCK.to_string()), Ok(MAX_CLOCK));
        for bad in [&(MAX_CLOCK + 1).to_string()[..], "-1", "1e3", "", "now"] {
            assert_eq!(at(bad), Err(Refusal::Reply(errors::BAD_AT)), "{bad:?}");
        }
        assert_eq!(parse_at(&[b"AT"], 1), Err(Refusal::Reply(errors::BAD_AT)));
    }
}
