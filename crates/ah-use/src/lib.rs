//! The use step of autoheuristic-rs.
//!
//! - [`workload`]: draw a fresh workload with a collection runner, decide every input through
//!   the runtime ([`ah_runtime::runtime::AutoHeuristic`]) with the generated heuristics, autotune
//!   and cache when unsure, and account for the time of each pick against always-default and
//!   the oracle.
//!
//! - [`replay`]: evaluate a trained heuristic on any log, with the trainer's metrics (the
//!   evaluation layer, `ah-eval`), and check that the linked generated code decides like the
//!   model; [`decisions`]: every input's decision of a replay, as CSV.
//!
//! This library prints nothing; the `ah-use` binary does.
#![deny(missing_docs)]

pub mod decisions;
pub mod model_heuristic;
pub mod names;
pub mod replay;
pub mod workload;

/// The registry of every generated heuristic linked into this build.
pub fn generated_registry() -> ah_core::Registry {
    let mut registry = ah_core::Registry::new();
    ah_heuristics::register_all(&mut registry);
    registry
}
