//! The integration tests of `ah-train`, one test binary (`cargo test -p ah-train --test it`;
//! `cargo test -p ah-train --test it MODULE::` runs one file's tests).

mod anchors;
mod cli;
mod cli_refusals;
mod prune_cli;
mod small_log;
