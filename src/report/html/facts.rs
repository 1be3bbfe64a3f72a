//! The report's facts about the servers: each service's slots, queue and service time (or
//! OCC row) and what changes how it answers over the run, as one line each; under a sweep
//! that changes them, as the verdict's point has them.

use super::escape;
use crate::scenario::sweep::ScenarioFile;
use crate::text::counted;
use crate::time::SimDuration;

/// The services of `file`, one line each. When the sweep changes them, those of the last
/// point, which the verdict and the charts are about, and the line says so (helper-98: the
/// first point's `warmup 1h` read as the setting of a verdict at `warmup = 1s`).
pub(super) fn describe_services(file: &ScenarioFile) -> String {
    let of = |s: &crate::model::Scenario| {
        s.services
            .iter()
            .map(|svc| {
                let calls: Vec<&str> = svc
                    .calls
                    .iter()
                    .map(|&c| s.services[c].name.as_str())
                    .collect();
                format!(
                    "{}: {}{}",
                    escape(&svc.name),
                    escape(&describe_server(&svc.server)),
                    if calls.is_empty() {
                        String::new()
                    } else {
                        format!(", calls {}", escape(&calls.join(", ")))
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("<br>")
    };
    let last = file.points.len() - 1;
    let shown = of(&file.points[last].scenario);
    if file.points.iter().all(|p| of(&p.scenario) == shown) {
        shown
    } else {
        format!(
            "{shown}<br>(as{}, the verdict's point: the sweep changes {})",
            escape(&crate::report::chart::point_label(file, last)),
            if file.first().services.len() > 1 {
                "some of them"
            } else {
                "it"
            }
        )
    }
}

/// A server's settings in a line of the report's facts: its slots, queue and service time
/// (or its OCC row), and each setting that changes how it answers over the run: the queue's
/// discipline and timeout, slowdown, capacity steps, autoscaling, outages, rate limit.
fn describe_server(server: &crate::model::ServerSpec) -> String {
    use crate::model::Occ;
    let mut parts: Vec<String> = Vec::new();
    match server.occ {
        Occ::Off => {
            parts.push(counted(server.concurrency, "slot", "slots"));
            let mut queue = counted(server.queue, "queue place", "queue places");
            if server.queue > 0 && server.discipline != crate::model::Discipline::Fifo {
                queue.push_str(&format!(" ({})", server.discipline.label()));
            }
            parts.push(queue);
            if let Some(d) = server.queue_timeout {
                parts.push(format!("queue timeout {d}"));
            }
            parts.push(format!("service {}", server.service.describe()));
            if let Some(curve) = &server.slowdown {
                let points: Vec<String> = curve
                    .points()
                    .iter()
                    .map(|(h, f)| format!("x{f} at {h}"))
                    .collect();
                parts.push(format!("slowdown {} requests held", points.join(", ")));
            }
            if !server.capacity.is_empty() {
                let steps: Vec<String> = server
                    .capacity
                    .iter()
                    .map(|c| format!("{} at {}", c.concurrency, SimDuration(c.at.0)))
                    .collect();
                parts.push(format!("capacity steps {}", steps.join(", ")));
            }
            if let Some(a) = server.autoscale {
                parts.push(format!(
                    "autoscaled {}..{} slots (target {}, every {}, warmup {})",
                    a.min, a.max, a.target, a.interval, a.warmup
                ));
            }
        }
        mode => parts.push(format!(
            "OCC row ({}), write time {}",
            if mode == Occ::WriteOnly {
                "write-only"
            } else {
                "read-write"
            },
            server.occ_write.describe()
        )),
    }
    for o in &server.outages {
        parts.push(format!(
            "{} outage [{}, {})",
            o.kind.label(),
            SimDuration(o.start.0),
            SimDuration(o.end.0)
        ));
    }
    if let Some(r) = server.rate_limit {
        parts.push(format!("rate limit {}/s (burst {})", r.rate, r.burst));
    }
    parts.join(", ")
}
