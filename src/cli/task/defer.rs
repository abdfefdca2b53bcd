//! `git triad task defer`: park a task with a reason and a revisit date, as an arbiter decision
//! the user takes.

use clap::Args;

use super::record::decide;
use crate::cli::{CommandError, CommandResult, Context};
use crate::task::{ArbiterDecision, Decision};

/// Defer a task.
#[derive(Debug, Args)]
pub struct DeferArgs {
    /// The task's slug.
    pub slug: String,
    /// Why (recorded with your name).
    #[arg(long)]
    pub reason: String,
    /// When to look at it again (`YYYY-MM-DD`, or a full RFC 3339 time), after today: on
    /// that date the next command that reads the task list reopens it (ASSIGNED). A task
    /// already deferred may be deferred again, to a new date.
    #[arg(long, value_name = "DATE")]
    pub revisit_at: Option<String>,
}

/// Runs `git triad task defer`.
pub fn run(ctx: &Context, a: &DeferArgs) -> CommandResult {
    if let Some(at) = &a.revisit_at {
        if let Err(why) = calendar_date(at) {
            return Err(CommandError::usage(format!("`{at}` is not a date: {why}"))
                .hint("use YYYY-MM-DD, e.g. --revisit-at 2026-09-01"));
        }
        let today = &crate::clock::now_ts()[..10];
        if &at[..10] <= today {
            return Err(CommandError::usage(format!(
                "the revisit date {at} is not after today ({today}): a deferral until then would be due at once, and the next command that reads the task list would reopen it"
            ))
            .hint("give a later date, e.g. --revisit-at <YYYY-MM-DD>, or leave --revisit-at out to park it without one"));
        }
    }
    let mut d = ArbiterDecision::new(&a.slug, Decision::Defer, "");
    d.revisit_at = a.revisit_at.clone();
    decide(ctx, &a.slug, d, &a.reason)
}

/// Checks that `s` is a real calendar date, `YYYY-MM-DD`, or an RFC 3339 time on one
/// (`YYYY-MM-DDTHH:MM:SS` and an offset): the date is compared as text with today's, so a
/// month 13 or a 31st of April would be a date that never comes.
fn calendar_date(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let shaped = b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
    if !shaped {
        return Err("it is not written YYYY-MM-DD".into());
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    if !(1..=12).contains(&month) {
        return Err(format!("there is no month {month:02}"));
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&day) {
        return Err(format!("{year:04}-{month:02} has no day {day:02}"));
    }
    let time = &s[10..];
    if !time.is_empty() && !rfc3339_time(time) {
        return Err(format!(
            "`{time}` after the date is not an RFC 3339 time (THH:MM:SS and Z or an offset)"
        ));
    }
    Ok(())
}

/// Whether `t` is the part of an RFC 3339 time after its date: `THH:MM:SS`, optional
/// fractions, then `Z` or `±HH:MM`.
fn rfc3339_time(t: &str) -> bool {
    let two = |s: &str, max: u32| s.len() == 2 && s.parse::<u32>().is_ok_and(|n| n <= max);
    let Some(rest) = t.strip_prefix(['T', 't', ' ']) else {
        return false;
    };
    if rest.len() < 8 || !rest.is_char_boundary(8) {
        return false;
    }
    let (hms, mut zone) = rest.split_at(8);
    let hms: Vec<&str> = hms.split(':').collect();
    if hms.len() != 3 || !two(hms[0], 23) || !two(hms[1], 59) || !two(hms[2], 60) {
        return false;
    }
    if let Some(frac) = zone.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        zone = &frac[digits..];
    }
    match zone {
        "Z" | "z" => true,
        _ => zone
            .strip_prefix(['+', '-'])
            .and_then(|z| z.split_once(':'))
            .is_some_and(|(h, m)| two(h, 23) && two(m, 59)),
    }
}

#[cfg(test)]
mod tests {
    use super::calendar_date;

    #[test]
    fn only_days_the_calendar_has_are_dates() {
        for ok in [
            "2099-09-01",
            "2096-02-29",
            "2000-02-29",
            "2099-12-31T08:00:00Z",
            "2099-12-31T08:00:00.250+02:00",
        ] {
            assert_eq!(calendar_date(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("2099-13-45", "no month 13"),
            ("2099-04-31", "no day 31"),
            ("2100-02-29", "no day 29"),
            ("2099-00-10", "no month 00"),
            ("2099-9-1", "YYYY-MM-DD"),
            ("tomorrow", "YYYY-MM-DD"),
            ("2099-09-01 noon", "RFC 3339"),
            ("2099-09-01T25:00:00Z", "RFC 3339"),
        ] {
            let e = calendar_date(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
