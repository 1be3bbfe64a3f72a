//! herdsim: a deterministic discrete-event simulator of the thundering herd.
//!
//! N simulated clients call a capacity-limited server that has outages, rate limits and
//! brownouts; each client retries with a backoff strategy. herdsim runs every strategy of a
//! scenario side by side and measures total work, completion time and load peaks.
//!
//! ```text
//! scenario file (TOML)
//!   --scenario::validate---> RawScenario            serde, unknown keys refused, every
//!                            problem collected
//!   --scenario::check------> Scenario               typed, validated, durations in ns;
//!                            trace CSV files read (scenario::trace); model has the types
//!   --scenario::sweep------> ScenarioFile           one Scenario per sweep point
//!   --runner::plan---------> Job (point x strategy x replication), each with its own seed
//!   --engine::Simulation---> RunMetrics             one run per job, rayon across jobs
//!   --metrics::summary-----> StrategySummary + MeanBucket series (fixed reduction order)
//!   --report---------------> summary.csv, timeseries.csv, requests.csv, table on stdout,
//!                            charts (report::chart, SVG + PNG), report.html
//! ```
//!
//! Determinism: simulated time is integer nanoseconds ([`time::SimTime`]), the event queue
//! breaks ties by insertion order, each run draws from xoshiro256++ streams seeded by
//! [`runner::derive_seed`], and results are reduced in job order, so the same scenario and
//! seed give byte-identical files whatever the thread count.

#![warn(missing_docs)]

pub mod app;
pub mod cli;
pub mod compare;
pub mod engine;
pub mod error;
pub mod limits;
pub mod metrics;
pub mod model;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod shard;
pub mod text;
pub mod time;

pub use error::{Error, Result};
