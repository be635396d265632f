//! What the test suites share: one skip policy for what a machine may lack, and the walks over
//! a folder ([`corpus`], [`files_under`]) that several suites make.
//!
//! Some tests need `../shared` (PyTorch's public logs, the reference trainer), `python3`, or a
//! CUDA GPU, which a developer may not have. Without it a test prints why and skips; when the
//! matching variable is set ([`Requirement::variable`]: `AH_REQUIRE_SHARED`,
//! `AH_REQUIRE_PYTHON`, `AH_REQUIRE_GPU`, to anything but empty or `0`) absence is a failure,
//! so CI (which sets the first two) and a GPU job cannot pass silently.
#![deny(missing_docs)]

pub mod corpus;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variable that turns a missing `../shared` path from a skip into a failure.
pub const REQUIRE_SHARED: &str = "AH_REQUIRE_SHARED";
/// The variable that turns a missing `python3` from a skip into a failure.
pub const REQUIRE_PYTHON: &str = "AH_REQUIRE_PYTHON";
/// The variable that turns a missing CUDA GPU from a skip into a failure.
pub const REQUIRE_GPU: &str = "AH_REQUIRE_GPU";

/// Something a test may need that a machine may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// The data beside the repository (`../shared`).
    Shared,
    /// A `python3` on the `PATH`.
    Python,
    /// A CUDA driver and GPU.
    Gpu,
}

impl Requirement {
    /// The variable that makes this requirement's absence a failure.
    pub fn variable(self) -> &'static str {
        match self {
            Requirement::Shared => REQUIRE_SHARED,
            Requirement::Python => REQUIRE_PYTHON,
            Requirement::Gpu => REQUIRE_GPU,
        }
    }

    /// Whether the variable is set (to anything but empty or `0`).
    pub fn required(self) -> bool {
        std::env::var_os(self.variable()).is_some_and(|v| !v.is_empty() && v != "0")
    }
}

/// The one policy: `false` when `present`; otherwise `true` after printing `skipped: {what}`,
/// or a panic naming `what` when the requirement's variable is set.
///
/// # Panics
/// When `present` is false and the requirement's variable is set.
pub fn skip_unless(requirement: Requirement, present: bool, what: &str) -> bool {
    if present {
        return false;
    }
    let variable = requirement.variable();
    assert!(
        !requirement.required(),
        "{what}, and {variable} is set: this test must run here"
    );
    eprintln!("skipped: {what} ({variable}=1 makes this a failure)");
    true
}

/// `true` (after printing why) when a test should skip because `path` (under `../shared`) is
/// missing; `false` when the path exists.
///
/// # Panics
/// When `path` is missing and `AH_REQUIRE_SHARED` is set: the test fails, naming the path.
pub fn skip_without(path: &Path) -> bool {
    skip_unless(
        Requirement::Shared,
        path.exists(),
        &format!(
            "{} is missing (clone ../shared beside the repository)",
            path.display()
        ),
    )
}

/// Whether `python3 --version` runs.
pub fn python3_present() -> bool {
    Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `true` (after printing why) when a test should skip because `python3` is missing; `for_what`
/// says what needs it.
///
/// # Panics
/// When `python3` is missing and `AH_REQUIRE_PYTHON` is set.
pub fn skip_without_python(for_what: &str) -> bool {
    skip_unless(
        Requirement::Python,
        python3_present(),
        &format!("python3 is not installed ({for_what} needs it)"),
    )
}

/// `true` (after printing why) when a test should skip because there is no CUDA GPU;
/// `present` is the caller's probe (the driver library loads and a device is visible).
///
/// # Panics
/// When there is none and `AH_REQUIRE_GPU` is set.
pub fn skip_without_gpu(present: bool) -> bool {
    skip_unless(
        Requirement::Gpu,
        present,
        "no CUDA driver or GPU on this machine",
    )
}

/// Every file under `dir` (recursively), relative to it, sorted.
///
/// # Panics
/// When a folder under `dir` cannot be read.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// `true` (after printing why) when a test should skip because no FIFO (named pipe) can be
/// made at `path` (no `mkfifo` on the machine); `false` once the FIFO is there.
pub fn skip_without_fifo(path: &Path) -> bool {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: no mkfifo");
    }
    !made
}

/// Waits for `child` at most `limit` and returns its output.
///
/// # Panics
/// When it is still running then (it hangs): the test fails naming `what`, and the child is
/// killed.
pub fn wait_at_most(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().expect("the child's status").is_none() {
        if started.elapsed() > limit {
            child.kill().expect("kill the child");
            panic!("{what}: still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the child's output")
}

/// Runs `cmd` to its end and returns its output.
///
/// # Panics
/// When it cannot start or does not succeed: the test fails showing its stderr.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{:?}: {}\n{}",
        cmd.get_program(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
