//! SIGINT and SIGTERM during a collection.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

use anyhow::Context as _;

/// Makes SIGINT and SIGTERM set `stop` (the collection takes no new input, writes the ones in
/// progress and closes its session, interrupted) and returns the number of the signal that
/// came; a second signal gets the default action (the process dies at once, as before), so a
/// stuck device call can still be killed; the next run repairs the log. signal-hook rather
/// than ctrlc: it tells the two signals apart and restores the default action for the second.
pub(crate) fn stop_on_signals(stop: &Arc<AtomicBool>) -> anyhow::Result<Arc<AtomicUsize>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let which = Arc::new(AtomicUsize::new(SIGINT as usize));
    for signal in [SIGINT, SIGTERM] {
        // Actions run in the order registered: the check of a signal already received first.
        flag::register_conditional_default(signal, Arc::clone(stop))
            .and_then(|_| flag::register_usize(signal, Arc::clone(&which), signal as usize))
            .and_then(|_| flag::register(signal, Arc::clone(stop)))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    Ok(which)
}
