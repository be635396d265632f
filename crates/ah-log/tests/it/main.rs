//! The integration tests of `ah-log`, one test binary (`cargo test -p ah-log --test it`;
//! `cargo test -p ah-log --test it MODULE::` runs one file's tests).

mod corpus;
mod fuzz_log;
mod hostile;
mod log_round_trip;
mod real_logs;
