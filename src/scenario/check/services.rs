//! The service graph: `[[service]]` tables (or v1's `[server]` as one service): names,
//! `calls` (unknown names, self-calls, cycles, services nothing reaches, `calls` on an OCC
//! service), the latency to each service, and the retry policy of its downstream calls; and
//! the refusal of the `[[service]]`-only keys in `[server]` and `[fallback]`. Each service's
//! own server keys are checked in `server`.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::retry::Layer;
use super::{Check, graph};
use crate::model::dist::Dist;
use crate::model::outcome::ReasonSet;
use crate::model::{Occ, ServerSpec, ServiceRetry, ServiceSpec, no_retry};
use crate::scenario::guess::guess_value;
use crate::scenario::raw::{RawPolicy, RawScenario, RawServer, RawServiceRetry};
use crate::time::SimDuration;

impl Check<'_> {
    /// Refuses the `[[service]]`-only keys in `[server]` or `[fallback]` (`table`).
    pub(super) fn not_a_service(&mut self, t: &Spanned<RawServer>, table: &str, why: &str) {
        let s = t.get_ref();
        let present = [
            ("name", s.name.as_ref().map(|v| v.span())),
            ("calls", s.calls.as_ref().map(|v| v.span())),
            ("retry", s.retry.as_ref().map(|v| v.span())),
            (
                "propagate_deadline",
                s.propagate_deadline.as_ref().map(|v| v.span()),
            ),
        ];
        for (k, span) in present {
            if let Some(span) = span {
                self.err(
                    Some(span),
                    &format!("{table}.{k}"),
                    format!("unknown key `{k}` in [{table}]: `{k}` is a key of [[service]] tables, and {why}"),
                );
            }
        }
    }

    /// The service graph: `[[service]]` tables, or v1's `[server]` as one service named
    /// `server`. `network` is `[network].latency` (absent: reported by the caller when
    /// needed); `retry` holds the `[retry]` defaults inline service policies build on.
    pub(super) fn services(
        &mut self,
        raw: &RawScenario,
        network: Option<&Dist>,
        retry: &RawPolicy,
    ) -> Vec<ServiceSpec> {
        let default_latency = network
            .cloned()
            .unwrap_or(Dist::Constant(SimDuration::ZERO));
        if raw.service.is_empty() {
            let server = match raw.server.as_ref() {
                None => {
                    self.err(
                        None,
                        "server",
                        "missing required table [server] (or [[service]] tables)",
                    );
                    placeholder_server()
                }
                Some(s) => {
                    if let Some(l) = &s.get_ref().latency {
                        self.err(
                            Some(l.span()),
                            "server.latency",
                            "unknown key `latency` in [server]: the primary server's latency is [network].latency",
                        );
                    }
                    self.not_a_service(s, "server", "[server] is the only service");
                    self.server(s, "server")
                }
            };
            return vec![ServiceSpec {
                name: "server".to_string(),
                server,
                latency: default_latency,
                calls: Vec::new(),
                retry: ServiceRetry::Fixed(Box::new(no_retry())),
                propagate_deadline: false,
            }];
        }
        if raw.server.is_some() {
            self.err(
                Some(raw.service[0].span()),
                "service",
                "expected either [server] (one server) or [[service]] tables (a service graph), found both",
            );
        }

        let mut services = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (i, t) in raw.service.iter().enumerate() {
            let s = t.get_ref();
            let prefix = format!("service[{i}]");
            let k = |f: &str| format!("{prefix}.{f}");
            let name = match &s.name {
                Some(n) => {
                    let name = self.name(n, &k("name"));
                    match index.get(&name) {
                        Some(first) => self.err(
                            Some(n.span()),
                            &k("name"),
                            format!(
                                "expected a unique name, found \"{name}\" again (also service[{first}])"
                            ),
                        ),
                        None => {
                            index.insert(name.clone(), i);
                        }
                    }
                    name
                }
                None => {
                    self.missing(Some(t.span()), &k("name"));
                    format!("service-{i}")
                }
            };
            let latency = match &s.latency {
                Some(l) => self.dist(l, &k("latency")),
                None => default_latency.clone(),
            };
            let server = self.server(t, &prefix);
            let retry = match &s.retry {
                None => ServiceRetry::Fixed(Box::new(no_retry())),
                Some(r) => self.service_retry(r, &k("retry"), retry),
            };
            services.push(ServiceSpec {
                name,
                server,
                latency,
                calls: Vec::new(),
                retry,
                propagate_deadline: s.propagate_deadline.as_ref().is_some_and(|b| *b.get_ref()),
            });
        }

        // Resolve `calls` by name; remember where each call is written, and its index in
        // the list as written (refused names are left out of `calls`).
        let mut call_spans: Vec<Vec<(usize, Range<usize>)>> = Vec::new();
        // Calls that name no service, to the services they are guessed to mean: those
        // count as called when judging which services clients reach.
        let mut guessed_calls: Vec<(usize, usize)> = Vec::new();
        for (i, t) in raw.service.iter().enumerate() {
            let mut calls = Vec::new();
            let mut spans = Vec::new();
            for (c, callee) in t
                .get_ref()
                .calls
                .iter()
                .flat_map(|c| c.get_ref())
                .enumerate()
            {
                let name = callee.get_ref();
                let at = format!("service[{i}].calls[{c}]");
                match index.get(name) {
                    Some(&j) if j == i => self.err(
                        Some(callee.span()),
                        &at,
                        format!(
                            "expected the names of other services (a service may not call itself), found \"{name}\""
                        ),
                    ),
                    Some(&j) => {
                        calls.push(j);
                        spans.push((c, callee.span()));
                    }
                    None => {
                        for (j, s) in services.iter().enumerate() {
                            if j != i && !guess_value(name, [s.name.as_str()]).is_empty() {
                                guessed_calls.push((i, j));
                            }
                        }
                        let mut known: Vec<&str> = Vec::new();
                        for (j, s) in services.iter().enumerate() {
                            if j != i
                                && index.get(&s.name) == Some(&j)
                                && !known.contains(&s.name.as_str())
                            {
                                known.push(&s.name);
                            }
                        }
                        let shown: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                        self.err(
                            Some(callee.span()),
                            &at,
                            format!(
                                "expected the name of a [[service]] ({}), found \"{name}\"{}",
                                if known.is_empty() {
                                    "there is no other".to_string()
                                } else {
                                    format!("one of {}", shown.join(", "))
                                },
                                guess_value(name, known.iter().copied())
                            ),
                        );
                    }
                }
            }
            if !calls.is_empty() && services[i].server.occ != Occ::Off {
                // An OCC row answers at its commit; there is no service time after which
                // calls could follow, and the engine has no job for it.
                let span = t.get_ref().calls.as_ref().map(|c| c.span());
                self.err(
                    span,
                    &format!("service[{i}].calls"),
                    "expected no `calls` on an OCC service (occ is set: it answers at its commit and calls nothing), found a list of services".to_string(),
                );
            }
            services[i].calls = calls;
            call_spans.push(spans);
        }
        let calls: Vec<Vec<usize>> = services.iter().map(|s| s.calls.clone()).collect();
        // Reported at the call that closes the cycle, in file order (the one most likely
        // just added), not at the first service on it.
        for (cycle, (from, call)) in graph::cycles(&calls) {
            let (written, span) = call_spans[from]
                .get(call)
                .map_or((call, None), |(c, span)| (*c, Some(span.clone())));
            let names: Vec<&str> = cycle
                .iter()
                .chain(std::iter::once(&cycle[0]))
                .map(|&i| services[i].name.as_str())
                .collect();
            self.err(
                span,
                &format!("service[{from}].calls[{written}]"),
                format!(
                    "expected calls that form no cycle, found {}",
                    names.join(" -> ")
                ),
            );
        }
        // A misspelt callee (`midd` for `mid`) leaves the service it meant uncalled: one
        // mistake, reported at the call, not again at every service it cuts off.
        let mut meant = calls.clone();
        for &(i, j) in &guessed_calls {
            meant[i].push(j);
        }
        let reached = graph::reachable(&meant, 0);
        for (i, t) in raw.service.iter().enumerate() {
            // A service without a name, or with another's, has been reported already.
            let named = t.get_ref().name.is_some() && index.get(&services[i].name) == Some(&i);
            if !reached[i] && named {
                let span = t.get_ref().name.as_ref().map_or(t.span(), |n| n.span());
                self.err(
                    Some(span),
                    &format!("service[{i}].name"),
                    format!(
                        "expected a service that clients reach (the first service, `{}`, or one it calls, directly or not), found \"{}\", which nothing calls",
                        services[0].name, services[i].name
                    ),
                );
            }
        }
        services
    }

    /// A service's `retry`: `"strategy"`, or an inline policy over the `[retry]` defaults.
    fn service_retry(
        &mut self,
        v: &Spanned<RawServiceRetry>,
        key: &str,
        retry: &RawPolicy,
    ) -> ServiceRetry {
        let expected = "expected \"strategy\" (the compared strategy) or a policy table such as { max_attempts = 3, base = \"10ms\", cap = \"1s\" }";
        match v.get_ref() {
            RawServiceRetry::Word(w) if w == "strategy" => ServiceRetry::Strategy,
            RawServiceRetry::Word(w) => {
                self.err(
                    Some(v.span()),
                    key,
                    format!("{expected}, found \"{w}\"{}", guess_value(w, ["strategy"])),
                );
                ServiceRetry::Fixed(Box::new(no_retry()))
            }
            RawServiceRetry::Bad(found) => {
                self.err(Some(v.span()), key, format!("{expected}, found {found}"));
                ServiceRetry::Fixed(Box::new(no_retry()))
            }
            RawServiceRetry::Table(t) => {
                if let Some(n) = &t.name {
                    self.err(
                        Some(n.span()),
                        &format!("{key}.name"),
                        format!("unknown key `name` in {key}: a service's policy has no name"),
                    );
                }
                if let Some(f) = &t.fallback_on {
                    self.err(
                        Some(f.span()),
                        &format!("{key}.fallback_on"),
                        format!(
                            "unknown key `fallback_on` in {key}: fallback is for client requests only, not a service's calls"
                        ),
                    );
                }
                let layers = [
                    Layer {
                        policy: t,
                        prefix: key.to_string(),
                    },
                    Layer {
                        policy: retry,
                        prefix: "retry".to_string(),
                    },
                ];
                // [retry]'s fallback_on (for client requests) is not inherited.
                let mut policy = self.policy(&layers, Some(v.span()), key, true, true);
                policy.retry.fallback_on = ReasonSet::default();
                ServiceRetry::Fixed(Box::new(policy))
            }
        }
    }
}

/// A stand-in server for a scenario whose `[server]` is missing (already reported).
pub(super) fn placeholder_server() -> ServerSpec {
    ServerSpec::plain(1, 0, Dist::Constant(SimDuration::ZERO))
}
