//! The integration tests of `ah-codegen`, one test binary (`cargo test -p ah-codegen --test it`;
//! `cargo test -p ah-codegen --test it MODULE::` runs one file's tests).

mod cli;
mod corpus;
mod every_operation;
mod hostile;
mod python_artifact;
mod python_check;
