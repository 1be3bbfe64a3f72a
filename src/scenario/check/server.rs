//! One server's keys, in `[server]`, a `[[service]]` or `[fallback]`: slots, queue and its
//! discipline, service time and how it degrades (slowdown, capacity steps, autoscaling),
//! outages, rate limiter, OCC. The graph the services form is checked in `services`.

use std::ops::Range;

use toml::Spanned;

use super::Check;
use crate::model::dist::Dist;
use crate::model::service::{Autoscale, CapacityStep, Slowdown};
use crate::model::{Discipline, Occ, Outage, OutageKind, RateLimiter, ServerSpec};
use crate::scenario::guess::{guess_value, quoted_words};
use crate::scenario::raw::{RawAutoscale, RawCapacityStep, RawList, RawOcc, RawOutage, RawServer};

/// The words `kind` takes in an outage.
const OUTAGE_KINDS: [&str; 5] = ["down", "unreachable", "errors", "slow", "crash"];
use crate::time::{SimDuration, SimTime};

/// How far below 0 a slowdown's extension may compute before it is refused: rounding, not
/// a falling curve (factors are multipliers of order 1).
const SLOWDOWN_TOLERANCE: f64 = 1e-9;

impl Check<'_> {
    pub(super) fn server(&mut self, t: &Spanned<RawServer>, table: &str) -> ServerSpec {
        let s = t.get_ref();
        let key = |k: &str| format!("{table}.{k}");
        // An OCC server decides each write on arrival: slots and service time do not apply.
        let occ_mode = match s.occ.as_ref().map(|o| (o.get_ref(), o.span())) {
            None | Some((RawOcc::Bool(false), _)) => Occ::Off,
            Some((RawOcc::Bool(true), _)) => Occ::ReadWrite,
            Some((RawOcc::Word(w), _)) if w == "read-write" => Occ::ReadWrite,
            Some((RawOcc::Word(w), _)) if w == "write-only" => Occ::WriteOnly,
            Some((other, span)) => {
                let found = match other {
                    RawOcc::Word(w) => {
                        format!("\"{w}\"{}", guess_value(w, ["read-write", "write-only"]))
                    }
                    RawOcc::Bad(found) => found.clone(),
                    RawOcc::Bool(b) => b.to_string(),
                };
                self.err(
                    Some(span),
                    &key("occ"),
                    format!(
                        "expected true, false, \"read-write\" or \"write-only\", found {found}"
                    ),
                );
                Occ::Off
            }
        };
        // A misspelt mode (reported above) still means an OCC server was meant.
        let occ_misspelt = occ_mode == Occ::Off
            && matches!(
                s.occ.as_ref().map(|o| o.get_ref()),
                Some(RawOcc::Word(_) | RawOcc::Bad(_))
            );
        let occ = occ_mode != Occ::Off || occ_misspelt;
        let occ_write = match &s.occ_write {
            None => Dist::Constant(SimDuration::ZERO),
            Some(d) => {
                if !occ {
                    let found = if s.occ.is_some() {
                        "occ = false"
                    } else {
                        "no `occ`"
                    };
                    self.err(
                        Some(d.span()),
                        &key("occ_write"),
                        format!(
                            "`occ_write` applies only to an OCC server (occ = true, \"read-write\" or \"write-only\"), found {found}"
                        ),
                    );
                }
                self.dist(d, &key("occ_write"))
            }
        };
        let concurrency = match &s.concurrency {
            Some(n) => self
                .int(n, &key("concurrency"), 1, u32::MAX as i64)
                .unwrap_or(1) as u32,
            None if occ => 1,
            None => {
                self.missing(Some(t.span()), &key("concurrency"));
                1
            }
        };
        let queue = s
            .queue
            .as_ref()
            .and_then(|q| self.int(q, &key("queue"), 0, u32::MAX as i64))
            .unwrap_or(0) as u32;
        let service = match &s.service {
            Some(d) => self.dist(d, &key("service")),
            None if occ => Dist::Constant(SimDuration::ZERO),
            None => {
                self.missing(Some(t.span()), &key("service"));
                Dist::Constant(SimDuration::ZERO)
            }
        };
        let mut outages: Vec<(Outage, Range<usize>, usize)> = s
            .outages
            .iter()
            .enumerate()
            .filter_map(|(i, o)| {
                self.outage(o, &format!("{table}.outages[{i}]"))
                    .map(|x| (x, o.span(), i))
            })
            .collect();
        outages.sort_by_key(|(o, _, _)| o.start);
        // Sorted by start, a window overlaps an earlier one iff it starts before the latest
        // end seen so far (comparing neighbours only would miss one long window).
        let mut latest: Option<(SimTime, SimTime, usize)> = None;
        for (b, span, j) in &outages {
            if let Some((start, end, i)) = latest
                && b.start < end
            {
                self.err(
                    Some(span.clone()),
                    &format!("{table}.outages[{j}]"),
                    format!(
                        "expected outages that do not overlap, found [{}, {}) overlapping {table}.outages[{i}] [{}, {})",
                        SimDuration(b.start.0),
                        SimDuration(b.end.0),
                        SimDuration(start.0),
                        SimDuration(end.0),
                    ),
                );
            }
            if latest.is_none_or(|(_, end, _)| b.end > end) {
                latest = Some((b.start, b.end, *j));
            }
        }
        let rate_limit = s.rate_limit.as_ref().map(|r| {
            let rl = r.get_ref();
            let rate = match &rl.rate {
                Some(v) => self
                    .float(
                        v,
                        &key("rate_limit.rate"),
                        |x| x > 0.0,
                        "a rate > 0 (tokens per second)",
                    )
                    .unwrap_or(1.0),
                None => {
                    self.missing(Some(r.span()), &key("rate_limit.rate"));
                    1.0
                }
            };
            let burst = rl
                .burst
                .as_ref()
                .and_then(|v| self.float(v, &key("rate_limit.burst"), |x| x >= 1.0, "a burst >= 1"))
                .unwrap_or(rate.max(1.0));
            RateLimiter {
                rate,
                burst,
                retry_after: self.hint(rl.retry_after.as_ref(), &key("rate_limit.retry_after")),
            }
        });
        let discipline = self.either_knowing(
            super::spelled(&s.discipline),
            &key("discipline"),
            ("fifo", Discipline::Fifo),
            ("lifo", Discipline::Lifo),
            Discipline::Fifo,
            &[
                ("filo", "lifo", "first in, last out"),
                ("lilo", "fifo", "last in, last out"),
                ("fcfs", "fifo", "first come, first served"),
                ("lcfs", "lifo", "last come, first served"),
            ],
        );
        let queue_timeout = self.limit(s.queue_timeout.as_ref(), &key("queue_timeout"));
        let slowdown = s
            .slowdown
            .as_ref()
            .and_then(|v| self.slowdown(v, &key("slowdown")));
        let capacity = self.capacity(&s.capacity, table);
        let autoscale = s
            .autoscale
            .as_ref()
            .map(|a| self.autoscale(a, &key("autoscale")));
        if let (Some(curve), Some(v)) = (&slowdown, &s.slowdown) {
            // Its most slots: a capacity drop cuts nothing running.
            let slots = capacity
                .iter()
                .map(|c| c.concurrency)
                .chain(autoscale.map(|a| a.max))
                .fold(concurrency, u32::max);
            self.slowdown_reach(curve, v, &key("slowdown"), slots, queue);
        }
        ServerSpec {
            concurrency,
            queue,
            service,
            outages: outages.into_iter().map(|(o, _, _)| o).collect(),
            rate_limit,
            retry_after: self.hint(s.retry_after.as_ref(), &key("retry_after")),
            client_error_rate: s
                .client_error_rate
                .as_ref()
                .and_then(|v| {
                    self.float(
                        v,
                        &key("client_error_rate"),
                        |x| (0.0..=1.0).contains(&x),
                        "a share in [0, 1]",
                    )
                })
                .unwrap_or(0.0),
            occ: occ_mode,
            occ_write,
            discipline,
            queue_timeout,
            slowdown,
            capacity,
            autoscale,
        }
    }

    fn outage(&mut self, t: &Spanned<RawOutage>, key: &str) -> Option<Outage> {
        let o = t.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        let start = match &o.start {
            Some(d) => self.duration(d, &k("start"), false),
            None => {
                self.missing(Some(t.span()), &k("start"));
                None
            }
        };
        let end = match &o.end {
            Some(d) => self.duration(d, &k("end"), false),
            None => {
                self.missing(Some(t.span()), &k("end"));
                None
            }
        };
        let kind_word = o
            .kind
            .as_ref()
            .map(|k| k.get_ref().as_str())
            .unwrap_or("down");
        // Each pointed at the key's own line, not at the outage's table header.
        for (span, field, kind) in [
            (
                o.error_rate.as_ref().map(|v| v.span()),
                "error_rate",
                "errors",
            ),
            (o.slowdown.as_ref().map(|v| v.span()), "slowdown", "slow"),
            (
                o.retry_after.as_ref().map(|v| v.span()),
                "retry_after",
                "down",
            ),
        ] {
            if let Some(span) = span
                && kind_word != kind
            {
                self.err(
                    Some(span),
                    &k(field),
                    format!(
                        "`{field}` applies only to kind = \"{kind}\", found kind = \"{kind_word}\""
                    ),
                );
            }
        }
        let kind = match kind_word {
            "down" => OutageKind::Down,
            "unreachable" => OutageKind::Unreachable,
            "errors" => OutageKind::Errors(match &o.error_rate {
                Some(v) => self
                    .float(
                        v,
                        &k("error_rate"),
                        |x| (0.0..=1.0).contains(&x),
                        "a share in [0, 1]",
                    )
                    .unwrap_or(0.0),
                None => {
                    self.missing(Some(t.span()), &k("error_rate"));
                    0.0
                }
            }),
            "crash" => OutageKind::Crash,
            "slow" => OutageKind::Slow(match &o.slowdown {
                Some(v) => self
                    .float(v, &k("slowdown"), |x| x >= 1.0, "a factor >= 1")
                    .unwrap_or(1.0),
                None => {
                    self.missing(Some(t.span()), &k("slowdown"));
                    1.0
                }
            }),
            other => {
                let span = o.kind.as_ref().map(|k| k.span());
                self.err(
                    span,
                    &k("kind"),
                    format!(
                        "expected {}, found \"{other}\"{}",
                        quoted_words(&OUTAGE_KINDS, " or "),
                        guess_value(other, OUTAGE_KINDS)
                    ),
                );
                OutageKind::Down
            }
        };
        let retry_after = self.hint(o.retry_after.as_ref(), &k("retry_after"));
        let (start, end) = (start?, end?);
        if end <= start {
            self.err(
                o.end.as_ref().map(|e| e.span()),
                &k("end"),
                format!("expected end > start ({start}), found {end}"),
            );
            return None;
        }
        Some(Outage {
            start: SimTime(start.0),
            end: SimTime(end.0),
            kind,
            retry_after,
        })
    }

    /// `slowdown = [[h, factor], ...]`: h >= 0 strictly increasing, factors >= 0.
    ///
    /// The contract extends a slowdown's last segment with its slope, so a falling one
    /// reaches negative multipliers (no meaning for a service time) far enough out: refuses
    /// the curve if that happens at or below the most requests a server of at most `slots`
    /// slots and `queue` places can hold. Its points are >= 0, so only the extension can
    /// fall below 0, lowest at that bound.
    fn slowdown_reach(
        &mut self,
        curve: &Slowdown,
        v: &Spanned<RawList>,
        key: &str,
        slots: u32,
        queue: u32,
    ) {
        let most = u64::from(slots) + u64::from(queue);
        let at = curve.extended(most as f64);
        // A curve that reaches exactly 0 there may compute as -1.7e-16 ([[0, 0.4], [10, 0.3]]
        // at h = 40): the engine clamps such a factor to 0 anyway, so only a real fall counts.
        if at < -SLOWDOWN_TOLERANCE {
            self.err(
                Some(v.span()),
                key,
                format!(
                    "expected a curve that stays >= 0 up to h = {most}, the most requests the server can hold ({slots} slots + {queue} queue places; beyond the last point the last segment goes on with its slope), found {} at h = {most}",
                    crate::report::fmt_num(at)
                ),
            );
        }
    }

    fn slowdown(&mut self, v: &Spanned<RawList>, key: &str) -> Option<Slowdown> {
        let example = "[[0, 1.0], [200, 1.0], [600, 4.0]]";
        let items = match v.get_ref() {
            RawList::Items(items) => items,
            RawList::Bad(found) => {
                self.err(
                    Some(v.span()),
                    key,
                    format!(
                        "expected a list of [h, factor] pairs such as {example}, found {found}"
                    ),
                );
                return None;
            }
        };
        if items.is_empty() {
            self.err(
                Some(v.span()),
                key,
                "expected at least one [h, factor] pair, found none",
            );
            return None;
        }
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let at = Some(item.span());
            let k = format!("{key}[{i}]");
            let Some((h, f)) = self.pair(
                item,
                &k,
                "a pair [h, factor] of numbers (requests held, service-time multiplier) such as [200, 1.5]",
            ) else {
                ok = false;
                continue;
            };
            let h = match super::number(h) {
                Some(x) if x.is_finite() && x >= 0.0 => x,
                _ => {
                    self.err(
                        at,
                        &k,
                        format!("expected h, the requests held, as a number >= 0, found {h}"),
                    );
                    ok = false;
                    continue;
                }
            };
            let f = match super::number(f) {
                Some(x) if x.is_finite() && x >= 0.0 => x,
                _ => {
                    self.err(
                        at,
                        &k,
                        format!("expected a factor >= 0 (a service-time multiplier), found {f}"),
                    );
                    ok = false;
                    continue;
                }
            };
            if let Some(&(before, _)) = points.last()
                && h <= before
            {
                self.err(
                    at,
                    &k,
                    format!("expected h strictly increasing (> {before}), found {h}"),
                );
                ok = false;
                continue;
            }
            points.push((h, f));
        }
        ok.then(|| Slowdown::new(points))
    }

    /// `[[server.capacity]]` steps: `at` a duration, `concurrency` >= 0, `at` strictly
    /// increasing as written.
    fn capacity(&mut self, steps: &[Spanned<RawCapacityStep>], table: &str) -> Vec<CapacityStep> {
        let mut out: Vec<CapacityStep> = Vec::new();
        for (i, t) in steps.iter().enumerate() {
            let step = t.get_ref();
            let k = |f: &str| format!("{table}.capacity[{i}].{f}");
            let at = match &step.at {
                Some(d) => self.duration(d, &k("at"), false),
                None => {
                    self.missing(Some(t.span()), &k("at"));
                    None
                }
            };
            let concurrency = match &step.concurrency {
                Some(n) => self.int(n, &k("concurrency"), 0, u32::MAX as i64),
                None => {
                    self.missing(Some(t.span()), &k("concurrency"));
                    None
                }
            };
            let (Some(at), Some(concurrency)) = (at, concurrency) else {
                continue;
            };
            let at = SimTime(at.0);
            if let Some(before) = out.last()
                && at <= before.at
            {
                self.err(
                    step.at.as_ref().map(|a| a.span()),
                    &k("at"),
                    format!(
                        "expected steps in increasing `at` order (after {}), found {}",
                        SimDuration(before.at.0),
                        SimDuration(at.0)
                    ),
                );
                continue;
            }
            out.push(CapacityStep {
                at,
                concurrency: concurrency as u32,
            });
        }
        out
    }

    /// `autoscale = { min, max, target = 0.7, interval = "10s", warmup = "60s" }`.
    fn autoscale(&mut self, v: &Spanned<RawAutoscale>, key: &str) -> Autoscale {
        let a = v.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        let bound = |c: &mut Self, x: &Option<Spanned<i64>>, field: &str| match x {
            Some(n) => c.int(n, &k(field), 1, u32::MAX as i64).map(|n| n as u32),
            None => {
                c.missing(Some(v.span()), &k(field));
                None
            }
        };
        let min = bound(self, &a.min, "min");
        let max = bound(self, &a.max, "max");
        if let (Some(lo), Some(hi), Some(m)) = (min, max, &a.max)
            && hi < lo
        {
            self.err(
                Some(m.span()),
                &k("max"),
                format!("expected max >= min ({lo}), found {hi}"),
            );
        }
        let min = min.unwrap_or(1);
        Autoscale {
            min,
            max: max.unwrap_or(min).max(min),
            target: a
                .target
                .as_ref()
                .and_then(|t| {
                    self.float(
                        t,
                        &k("target"),
                        |x| x > 0.0 && x <= 1.0,
                        "a target utilisation in (0, 1]",
                    )
                })
                .unwrap_or(0.7),
            interval: a
                .interval
                .as_ref()
                .and_then(|d| self.duration(d, &k("interval"), true))
                .unwrap_or(SimDuration::from_secs(10)),
            warmup: a
                .warmup
                .as_ref()
                .and_then(|d| self.duration(d, &k("warmup"), false))
                .unwrap_or(SimDuration::from_secs(60)),
        }
    }
}
