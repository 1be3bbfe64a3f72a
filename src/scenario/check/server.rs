//! `[server]` and `[fallback]`: slots, queue, service time, outages, rate limiter, OCC.

use std::ops::Range;

use toml::Spanned;

use super::Check;
use crate::model::dist::Dist;
use crate::model::{Occ, Outage, OutageKind, RateLimiter, ServerSpec};
use crate::scenario::raw::{RawOutage, RawServer};
use crate::time::{SimDuration, SimTime};

impl Check<'_> {
    pub(super) fn server(&mut self, t: &Spanned<RawServer>, table: &str) -> ServerSpec {
        let s = t.get_ref();
        let key = |k: &str| format!("{table}.{k}");
        // An OCC server decides each write on arrival: slots and service time do not apply.
        let occ = s.occ.unwrap_or(false);
        let occ_mode = if occ { Occ::ReadWrite } else { Occ::Off };
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
            ..ServerSpec::plain(concurrency, queue, Dist::Constant(SimDuration::ZERO))
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
        let only_for = |c: &mut Self, present: bool, field: &str, kind: &str| {
            if present && kind_word != kind {
                c.err(
                    Some(t.span()),
                    &k(field),
                    format!(
                        "`{field}` applies only to kind = \"{kind}\", found kind = \"{kind_word}\""
                    ),
                );
            }
        };
        only_for(self, o.error_rate.is_some(), "error_rate", "errors");
        only_for(self, o.slowdown.is_some(), "slowdown", "slow");
        only_for(self, o.retry_after.is_some(), "retry_after", "down");
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
                    format!("expected \"down\", \"unreachable\", \"errors\" or \"slow\", found \"{other}\""),
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
}

pub(super) fn placeholder_server() -> ServerSpec {
    ServerSpec::plain(1, 0, Dist::Constant(SimDuration::ZERO))
}
