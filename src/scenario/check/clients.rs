//! `[clients]`: the client populations.

use super::Check;
use crate::model::{Closed, MAX_CLIENTS, Population, Source};
use crate::scenario::raw::RawScenario;
use crate::time::SimDuration;

impl Check<'_> {
    pub(super) fn clients(&mut self, raw: &RawScenario) -> Population {
        let mut clients = Closed {
            count: 1,
            start: SimDuration::ZERO,
            start_spread: SimDuration::ZERO,
            requests: 1,
            think: None,
        };
        let population = |c: Closed| Population {
            name: "clients".to_string(),
            clients: c.count,
            source: Source::Closed(c),
        };
        let Some(t) = raw.clients.as_ref() else {
            self.err(
                None,
                "clients",
                "missing required table [clients] (with `count`)",
            );
            return population(clients);
        };
        let c = t.get_ref();
        match &c.count {
            Some(n) => {
                clients.count = self.int(n, "clients.count", 1, MAX_CLIENTS).unwrap_or(1) as u32
            }
            None => self.missing(Some(t.span()), "clients.count"),
        }
        if let Some(s) = &c.start {
            clients.start = self.duration(s, "clients.start", false).unwrap_or_default();
        }
        if let Some(s) = &c.start_spread {
            clients.start_spread = self
                .duration(s, "clients.start_spread", false)
                .unwrap_or_default();
        }
        if let Some(r) = &c.requests {
            clients.requests = self
                .int(r, "clients.requests", 1, u32::MAX as i64)
                .unwrap_or(1) as u32;
        }
        clients.think = c.think.as_ref().map(|d| self.dist(d, "clients.think"));
        population(clients)
    }
}
