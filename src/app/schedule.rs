//! `herdsim schedule`: the delays a retry policy produces, per retry, for a sample of
//! clients, without running a simulation.

use rand::{RngExt, SeedableRng};

use super::print_stdout;
use crate::cli::{Draws, MINSTD_MODULUS, ScheduleArgs};
use crate::engine::SimRng;
use crate::error::{Error, Result};
use crate::limits::{self, MemoryLimit};
use crate::model::backoff::{Backoff, ladder_step};
use crate::model::policy::{Beyond, Combine, RetryAfterPolicy, parse_retry_after_header};
use crate::time::SimDuration;
use crate::{report, runner};

/// The table `herdsim schedule` prints: per retry, the un-jittered ladder, a few sample
/// clients' delays, and min / max / distinct count across all clients.
pub fn schedule_table(args: &ScheduleArgs) -> Result<String> {
    // The same bounds as the scenario keys they stand for (`multiplier`, `max_attempts`,
    // `retry_after.max`), so a schedule shown is one a scenario can run.
    if !args.multiplier.is_finite() || args.multiplier < 1.0 {
        return Err(Error::Usage(format!(
            "--multiplier: expected a number >= 1, found {}",
            args.multiplier
        )));
    }
    if args.attempts > u32::from(u16::MAX) {
        return Err(Error::Usage(format!(
            "--attempts: expected at most {} (as max_attempts in a scenario), found {}",
            u16::MAX,
            args.attempts
        )));
    }
    if args.retry_after_max.is_zero() {
        return Err(Error::Usage(
            "--retry-after-max: expected a duration > 0 (as retry_after.max in a scenario), found 0s"
                .into(),
        ));
    }
    if !args.increment.is_zero() && !args.jitter.uses_ladder() {
        return Err(Error::Usage(format!(
            "--increment: expected no increment with jitter \"{}\", which does not use the ladder (as the increment key in a scenario); found {}",
            args.jitter.describe(),
            args.increment
        )));
    }
    if !args.jitter_past_cap && !args.jitter.uses_ladder() {
        return Err(Error::Usage(format!(
            "--jitter-past-cap: expected true with jitter \"{}\", which does not use the ladder (as the jitter_past_cap key in a scenario); found false",
            args.jitter.describe()
        )));
    }
    if args.cap < args.base {
        return Err(Error::Usage(format!(
            "--cap: expected cap >= base ({}), found {}",
            args.base, args.cap
        )));
    }
    for (flag, n) in [("--clients", args.clients), ("--attempts", args.attempts)] {
        if n == 0 {
            return Err(Error::Usage(format!(
                "{flag}: expected a whole number >= 1, found 0"
            )));
        }
    }
    let backoff = Backoff {
        base: args.base,
        cap: args.cap,
        multiplier: args.multiplier,
        increment: args.increment,
        jitter: args.jitter,
        jitter_past_cap: args.jitter_past_cap,
    };
    let policy = RetryAfterPolicy {
        honor: true,
        max: args.retry_after_max,
        beyond: Beyond::Ignore,
        restart: false,
        combine: Combine::Replace,
    };
    let hint = args
        .retry_after
        .as_deref()
        .map(|h| parse_retry_after_header(h).unwrap_or(SimDuration::ZERO));
    let retries = args.attempts - 1;
    // Every delay is kept (the distinct count needs them all): refuse before allocating
    // when they would not fit, rather than abort on a failed allocation.
    let memory = MemoryLimit::new(args.max_memory);
    let needed = (args.clients as u64)
        .saturating_mul(retries as u64)
        .saturating_mul(std::mem::size_of::<SimDuration>() as u64)
        .saturating_add(limits::BASE_BYTES);
    if needed > memory.bytes {
        return Err(Error::Limit(format!(
            "schedule: {} clients x {retries} retries need an estimated {} of memory, more than the limit of {memory}: lower --clients or --attempts, or change the limit with --max-memory",
            args.clients,
            limits::Bytes(needed)
        )));
    }
    // columns[retry][client], each client drawing from its own seeded stream.
    let mut columns: Vec<Vec<SimDuration>> = (0..retries)
        .map(|_| Vec::with_capacity(args.clients as usize))
        .collect();
    for client in 0..args.clients {
        let seed = runner::derive_seed(args.seed, 0, client, 0);
        let mut rng = SimRng::from_seed(seed);
        let mut minstd = match args.draws {
            Some(Draws::Minstd(s)) => (u64::from(client) + 1) * s % MINSTD_MODULUS,
            _ => 0,
        };
        let mut state = backoff.initial_state();
        for (n, column) in (1..=retries).zip(&mut columns) {
            let u = match &args.draws {
                None => rng.random::<f64>(),
                Some(Draws::List(list)) => list[(n as usize - 1).min(list.len() - 1)],
                Some(Draws::Minstd(_)) => {
                    minstd = minstd * 48_271 % MINSTD_MODULUS;
                    minstd as f64 / MINSTD_MODULUS as f64
                }
            };
            // As the engine: the first `immediate_retries` retries wait 0 and the ladder
            // starts after them; a usable hint replaces the delay and leaves the state as it
            // was, except Polly V2's, which moves on whatever overrides the delay.
            let hinted = policy.choose(hint);
            let d = match ladder_step(n, args.immediate_retries) {
                None => hinted.unwrap_or(SimDuration::ZERO),
                Some(_) if hinted.is_some() && policy.hint_skips_backoff(args.jitter) => {
                    hinted.unwrap_or_default()
                }
                Some(step) => {
                    let d;
                    (d, state) = backoff.next_from(step, backoff.expo(step), state, u);
                    hinted.unwrap_or(d)
                }
            };
            column.push(d);
        }
    }
    let ms = |d: SimDuration| report::fmt_num((d.as_secs_f64() * 1e6).round() / 1e3);
    let samples = args.clients.min(3) as usize;
    let mut out = format!(
        "schedule: base {}, cap {}, multiplier {}{}, jitter {}{}{}, {}, {}, {}{}\ndelays in ms\n",
        args.base,
        args.cap,
        args.multiplier,
        match args.increment {
            d if d.is_zero() => String::new(),
            d => format!(", increment {d}"),
        },
        args.jitter.describe(),
        if args.jitter_past_cap {
            ""
        } else {
            " (none past the cap)"
        },
        match args.immediate_retries {
            0 => String::new(),
            k => format!(", {k} immediate"),
        },
        crate::text::counted(args.attempts, "attempt", "attempts"),
        crate::text::counted(args.clients, "client", "clients"),
        match &args.draws {
            None => format!("seed {}", args.seed),
            Some(Draws::List(list)) => format!(
                "draws {}",
                list.iter()
                    .map(|u| u.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Some(Draws::Minstd(s)) => format!("draws minstd:{s}"),
        },
        args.retry_after
            .as_ref()
            .map(|h| format!(", Retry-After \"{h}\""))
            .unwrap_or_default()
    );
    let uses_ladder = args.jitter.uses_ladder();
    let mut rows = vec![{
        // Decorrelated jitters draw each delay from the previous one, not around the
        // ladder: an `expo` column beside them would show numbers nothing uses.
        let mut h = vec!["retry".to_string()];
        if uses_ladder {
            h.push("expo".to_string());
        }
        h.extend((0..samples).map(|c| format!("client-{c}")));
        h.extend(["min", "max", "distinct"].map(String::from));
        h
    }];
    for (r, column) in columns.iter_mut().enumerate() {
        let n = r as u32 + 1;
        let mut row = vec![n.to_string()];
        if uses_ladder {
            let expo = ladder_step(n, args.immediate_retries)
                .map_or(SimDuration::ZERO, |step| backoff.expo(step));
            row.push(ms(expo));
        }
        row.extend(column.iter().take(samples).map(|d| ms(*d)));
        // Sorted in place, once its samples are taken: no copy of the column.
        column.sort_unstable();
        let distinct = 1 + column.windows(2).filter(|w| w[0] != w[1]).count();
        row.extend([
            ms(*column.first().expect("clients >= 1")),
            ms(*column.last().expect("clients >= 1")),
            distinct.to_string(),
        ]);
        rows.push(row);
        // Freed as soon as it is printed.
        *column = Vec::new();
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    Ok(out)
}

/// `herdsim schedule`: prints the table, and on stderr why a `--retry-after` value changes
/// nothing in it, when it does not.
pub(super) fn schedule_command(args: &ScheduleArgs) -> Result<()> {
    let table = schedule_table(args)?;
    print_stdout(&table)?;
    super::print_stderr(&retry_after_unused(args).into_iter().collect::<Vec<_>>());
    Ok(())
}

/// Why a `--retry-after` value is not used, as the engine would not use it (seed 003's
/// rules: a hint is a number of seconds, more than 0, at most `--retry-after-max`); None
/// when there is no value or it is used. Without this the table, the plain backoff's,
/// looked as if the header's hint had been applied.
fn retry_after_unused(args: &ScheduleArgs) -> Option<String> {
    let value = args.retry_after.as_deref()?;
    let why = match parse_retry_after_header(value) {
        None => "is not a number of seconds (the HTTP-date form is not simulated)".to_string(),
        Some(hint) if hint.is_zero() => "asks for no wait (a hint must be more than 0)".to_string(),
        Some(hint) if hint > args.retry_after_max => {
            format!("is more than --retry-after-max ({})", args.retry_after_max)
        }
        Some(_) => return None,
    };
    Some(format!(
        "warning: --retry-after \"{}\" {why}: unusable, so every delay is the backoff's",
        crate::text::escape(value)
    ))
}
