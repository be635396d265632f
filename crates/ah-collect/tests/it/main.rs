//! The integration tests of `ah-collect`, one test binary (`cargo test -p ah-collect --test it`;
//! `cargo test -p ah-collect --test it MODULE::` runs one file's tests).

mod cli;
mod common;
mod corpus;
mod data;
mod gz_sidecars;
mod hostile_logs;
mod resume_checks;
