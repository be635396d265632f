//! The Python artifact is compiled by CPython before it is written: an artifact that would
//! not import (too many nested parentheses, a recursion limit of CPython's compiler, a bug of
//! the generator) is refused, and nothing is written. PyTorch imports every artifact in its
//! folder, so one that does not compile would break the others too.
//!
//! Without `python3` on the `PATH` the check is skipped; the expression language's limits
//! (`ah_core::ops::MAX_DEPTH`) keep generated expressions within what CPython compiles, and
//! the tests compile and import an artifact for every operator at that depth.
//!
//! Starting `python3` costs more than compiling an artifact (tens of milliseconds, more behind
//! a version manager's shim), so a caller that knows it will generate one can start the
//! interpreter early ([`PythonCompiler::start`]) and hand it to [`crate::generate_with`]:
//! the start-up then overlaps the caller's other work (`ah-train` starts it before training).
//! The interpreter runs isolated (`-I`: no `PYTHON*` variables, no user site) and without
//! `site` (`-S`): neither changes what `compile` accepts, and no code of the machine's
//! Python installation runs.

use std::io::Write as _;
use std::process::{Child, Command, Stdio};

use crate::error::CodegenError;

/// What the interpreter runs: the first line of its input is the file name, the rest the
/// source, compiled as a module. The cyclic garbage collector is off: it finds nothing in a
/// compile, but walks every syntax-tree object again and again (a quarter of compiling a
/// large artifact).
const SCRIPT: &str = "import gc, sys; gc.disable(); n, _, s = sys.stdin.buffer.read().partition(b'\\n'); compile(s.decode('utf-8'), n.decode('utf-8'), 'exec')";

/// A `python3` started ahead of time, waiting for the one source it will compile.
#[derive(Debug)]
pub struct PythonCompiler {
    /// `None` when `python3` is not installed (every source then passes).
    child: Option<Child>,
}

impl PythonCompiler {
    /// Starts `python3`; without one on the `PATH` the compiler accepts every source.
    pub fn start() -> Result<Self, CodegenError> {
        let child = Command::new("python3")
            .args(["-I", "-S", "-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        match child {
            Ok(c) => Ok(Self { child: Some(c) }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self { child: None }),
            Err(e) => Err(CodegenError::io("python3", e)),
        }
    }

    /// Compiles `source` as the module `file_name`.
    pub fn compile(mut self, source: &str, file_name: &str) -> Result<(), CodegenError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // The name ends at the first line break: one inside it (never in a checked heuristic
        // name) would only change the name in CPython's messages.
        let label = file_name.replace(['\n', '\r'], " ");
        let mut stdin = child.stdin.take().expect("piped stdin");
        let mut input = Vec::with_capacity(label.len() + 1 + source.len());
        input.extend_from_slice(label.as_bytes());
        input.push(b'\n');
        input.extend_from_slice(source.as_bytes());
        // Written from a thread, so that a full stderr pipe cannot block both sides.
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child
            .wait_with_output()
            .map_err(|e| CodegenError::io("python3", e))?;
        let _ = writer.join();
        if out.status.success() {
            return Ok(());
        }
        Err(CodegenError::ArtifactDoesNotCompile {
            file: file_name.to_string(),
            message: last_lines(&String::from_utf8_lossy(&out.stderr), 4),
        })
    }
}

impl Drop for PythonCompiler {
    /// An unused interpreter (the caller failed before generating) is stopped and reaped.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Compiles `source` with `python3` as the module `file_name`; `Ok` also when `python3` is
/// not installed. For a caller that did not start a [`PythonCompiler`] ahead of time (the
/// InductorChoices handler module).
pub fn check_compiles(source: &str, file_name: &str) -> Result<(), CodegenError> {
    PythonCompiler::start()?.compile(source, file_name)
}

/// The last `n` non-empty lines of `text`, each at most 200 characters.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| ah_core::error::clip_to(l, 200).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_cpython_cannot_compile() {
        if ah_test_support::skip_without_python("compiling artifacts") {
            return;
        }
        check_compiles("x = 1\n", "_Ok.py").unwrap();
        let deep = format!("x = {}1{}\n", "(".repeat(300), ")".repeat(300));
        let err = check_compiles(&deep, "_Deep.py").unwrap_err().to_string();
        assert!(err.contains("_Deep.py"), "{err}");
        assert!(err.contains("line 1"), "{err}");
        assert!(err.len() < 1500, "{err}");
        let err = check_compiles("def f(:\n", "_Bad.py")
            .unwrap_err()
            .to_string();
        assert!(err.contains("SyntaxError"), "{err}");
    }

    /// A compiler started early compiles like one started on demand, and one never used is
    /// stopped when dropped.
    #[test]
    fn started_early_it_compiles_the_same_and_an_unused_one_stops() {
        if ah_test_support::skip_without_python("compiling artifacts") {
            return;
        }
        let early = PythonCompiler::start().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        early.compile("x = 1\n", "_Ok.py").unwrap();
        let err = PythonCompiler::start()
            .unwrap()
            .compile("x = 1\ndef f(:\n", "_Two\nLines.py")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("_Two Lines.py") && err.contains("line 2"),
            "{err}"
        );
        drop(PythonCompiler::start().unwrap());
    }
}
