//! The collection loop: draws sample inputs, measures them on one or more devices and appends
//! the rows to a PyTorch-format log, safely.
//!
//! - **Deterministic samples.** Sample `i` is drawn from a ChaCha8 stream `i` of the seed, so
//!   it is the same input whatever shard, device or resume produced it. `--shard I/N` takes the
//!   samples with `i % N == I`.
//! - **Rows.** Each input gives `reps x choices` rows, repetition-major (PyTorch's
//!   `--num-reps`: for each repetition, every choice); an input whose choices were all long in
//!   the first repetition gets `--long-reps` repetitions instead ([`Repetitions`](crate::runner::Repetitions)); feedback = the minimum of the timed
//!   calls in ms (`inf` when the choice failed). All rows of one input are written with one
//!   `write` and then `fsync`ed, so a kill loses at most the input in flight.
//! - **Sidecars.** `FILE.medians.txt` is the same log with the median of the timed calls as
//!   feedback (train on it for median labelling); a runner that reports one number per choice
//!   ([`Feedback::Reported`](crate::runner::Feedback), Inductor's benchmark) starts none, as it
//!   would copy the log. `FILE.provenance.json` records the device, library versions, tool
//!   version, seed, command lines and timing method (the runner's, where it reports its
//!   feedback) of every session.
//! - **Resume.** Re-running with the same output, seed and sample count skips inputs whose rows
//!   are all in the log; a torn last line, or an incomplete last input, is cut off first. The
//!   log's metadata line and header must be exactly the runner's (another column order would
//!   put values under other columns: refused); inputs the medians sidecar lacks are measured
//!   again for it. Samples are drawn one at a time as the workers take them, so memory does
//!   not grow with `--num-samples`.
//! - **Stop.** Setting [`CollectConfig::stop`] ends the collection early: no new input is
//!   started, the inputs being measured are finished and written, and the session is closed
//!   with its summary marked `interrupted`; running again resumes. The library installs no
//!   signal handler (the binary sets the token on SIGINT/SIGTERM).
//! - **Lock.** Every writer of a log (a collection, its repair, a merge onto it) holds the
//!   log's lock ([`lock_log`]): an exclusive `File::try_lock` on the log file itself (so two
//!   names of one file, hard or symbolic links, contend) and on the stable sidecar `FILE.lock`
//!   (never renamed, so a merge that replaces the log by a rename cannot orphan it); a merge
//!   holds shared locks on its inputs. A second writer is refused.
//!
//! By job: `config` (the request, and a device's backend started for it), `error` (what can
//! fail), `report` (what is reported, input by input and in total), `select` (which samples,
//! drawn as they are asked for), `todo` (which of them are left to measure), `paths` (the
//! log's default path and sidecars, checked before anything is written), `provenance` (the
//! sidecar and the checks of a resume), `resume` (repairing a log after a kill), `run` (the
//! collection loop), `workers` (the measuring threads), `merge` (joining shards). The log
//! format itself is `ah_log`'s.

mod config;
mod error;
mod merge;
mod paths;
mod provenance;
mod report;
mod resume;
mod run;
mod select;
mod todo;
mod workers;

#[cfg(test)]
mod reps_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod test_runner;
#[cfg(test)]
mod tests;

pub use ah_log::{lock_log, lock_path, LogLock};
pub use config::{open_backend, CollectConfig, Devices, Shard};
pub use error::CollectError;
pub use merge::{merge, MergeSummary};
pub use paths::check_outputs;
pub use paths::{default_log_path, extras_path, medians_path, provenance_path};
pub use report::{CollectSummary, InputReport, Observer, Silent};
pub use resume::{repair_log, Repair};
pub use run::collect;
pub use select::sample_rng;
