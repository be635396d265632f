//! What a collection shows while it runs: a progress bar on a terminal, a line every 5 %
//! otherwise, and the inputs whose choices failed.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ah_collect::backend::BackendInfo;
use ah_collect::collect::{InputReport, Observer};

use crate::signals::stop_on_signals;

/// Progress bar on a terminal; a line every 5 % otherwise (logs of batch jobs).
pub(crate) struct Progress {
    pub(crate) bar: Option<indicatif::ProgressBar>,
    pub(crate) quiet: bool,
    pub(crate) tty: bool,
    pub(crate) total: u64,
    pub(crate) done: u64,
    pub(crate) failures: u64,
    pub(crate) started: std::time::Instant,
    /// The collection's stop token, set by SIGINT/SIGTERM once measuring starts.
    stop: Arc<AtomicBool>,
    /// The signal that came (SIGINT unless SIGTERM), once the handler is installed.
    signal: Option<Arc<AtomicUsize>>,
}

impl Progress {
    pub(crate) fn new(quiet: bool, stop: Arc<AtomicBool>) -> Self {
        Self {
            stop,
            signal: None,
            bar: None,
            quiet,
            tty: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            failures: 0,
            started: std::time::Instant::now(),
        }
    }
    /// The number of the signal that stopped the collection (SIGINT when none came).
    pub(crate) fn signal(&self) -> usize {
        self.signal
            .as_ref()
            .map_or(signal_hook::consts::SIGINT as usize, |s| {
                s.load(Ordering::SeqCst)
            })
    }

    pub(crate) fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn start(&mut self, to_measure: u64, already_done: u64, devices: &[BackendInfo]) {
        self.total = to_measure;
        self.started = std::time::Instant::now();
        match stop_on_signals(&self.stop) {
            Ok(signal) => self.signal = Some(signal),
            Err(e) => eprintln!(
                "warning: {}: SIGINT/SIGTERM kill the collection at once (the next run repairs the log)",
                ah_core::error::report(e.as_ref())
            ),
        }
        if self.quiet {
            return;
        }
        let names: Vec<String> = devices
            .iter()
            .map(|d| format!("{} #{} ({})", d.device_name, d.ordinal, d.kind))
            .collect();
        eprintln!(
            "measuring {to_measure} inputs on {} ({already_done} already in the log)",
            names.join(", ")
        );
        if self.tty {
            let bar = indicatif::ProgressBar::new(to_measure);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {pos}/{len} inputs  {per_sec}  ETA {eta}  {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
    }

    fn input_done(&mut self, r: &InputReport) {
        self.done += 1;
        self.failures += r.failures as u64;
        if self.quiet {
            return;
        }
        if let Some(b) = &self.bar {
            b.inc(1);
            if self.failures > 0 {
                b.set_message(format!("{} inf", self.failures));
            }
            if let Some(e) = &r.first_error {
                b.println(format!(
                    "sample {}: a choice failed (logged as inf): {e}",
                    r.index
                ));
            }
            return;
        }
        if let Some(e) = &r.first_error {
            eprintln!("sample {}: a choice failed (logged as inf): {e}", r.index);
        }
        let step = (self.total / 20).max(1);
        if self.done.is_multiple_of(step) || self.done == self.total {
            let secs = self.started.elapsed().as_secs_f64();
            let rate = self.done as f64 / secs.max(1e-9) * 60.0;
            // The total is an estimate with --distinct or --exclude: never below what is done.
            let eta =
                self.total.saturating_sub(self.done) as f64 / (self.done as f64 / secs.max(1e-9));
            eprintln!(
                "{}/{} inputs, {:.0} s, {rate:.1} inputs/min, ETA {eta:.0} s",
                self.done, self.total, secs
            );
        }
    }
}
