//! What the test suites share about the data beside the repository.
//!
//! Some tests need `../shared` (PyTorch's public logs, the reference trainer), which a developer
//! may not have. Without it they skip with a message; in CI, which sets `AH_REQUIRE_SHARED`, a
//! missing path is a failure, so a CI run without `../shared` cannot pass silently.

use std::path::Path;

/// The variable that turns a missing `../shared` path from a skip into a failure.
pub const REQUIRE_SHARED: &str = "AH_REQUIRE_SHARED";

/// `true` (after printing why) when a test should skip because `path` is missing; `false` when
/// the path exists.
///
/// # Panics
/// When `path` is missing and `AH_REQUIRE_SHARED` is set: the test fails, naming the path.
pub fn skip_without(path: &Path) -> bool {
    if path.exists() {
        return false;
    }
    let required = std::env::var_os(REQUIRE_SHARED).is_some_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "{} is missing and {REQUIRE_SHARED} is set: clone ../shared beside the repository",
        path.display()
    );
    eprintln!(
        "skipped: {} is missing (clone ../shared beside the repository; {REQUIRE_SHARED}=1 makes this a failure)",
        path.display()
    );
    true
}
