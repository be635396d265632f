//! The integration tests of `ah-heuristics`, one test binary (`cargo test -p ah-heuristics --test it`;
//! `cargo test -p ah-heuristics --test it MODULE::` runs one file's tests).

mod parity;
mod schema;
mod tail;
