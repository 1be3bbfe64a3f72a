//! herdsim's integration tests: one binary, one module per concern (nexosim's layout).
//! CLI tests run the real binary through [`common::herdsim`]; engine tests call the library.

mod commands;
mod common;
mod conveniences;
mod deploy;
mod docs;
mod engine_cases;
mod errors;
mod errors_v2;
mod fuzz;
mod graphs;
mod hardening;
mod policies;
mod published;
mod report;
mod scenarios_v2;
mod seeds;
mod servers;
mod shards;
mod workloads;
