//! The Python artifact is compiled by CPython before it is written: an artifact that would
//! not import (too many nested parentheses, a recursion limit of CPython's compiler, a bug of
//! the generator) is refused, and nothing is written. PyTorch imports every artifact in its
//! folder, so one that does not compile would break the others too.
//!
//! Without `python3` on the `PATH` the check is skipped; the expression language's limits
//! (`ah_core::ops::MAX_DEPTH`) keep generated expressions within what CPython compiles, and
//! the tests compile and import an artifact for every operator at that depth.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::error::CodegenError;

/// Compiles `source` with `python3` as the module `file_name`; `Ok` also when `python3` is
/// not installed.
pub fn check_compiles(source: &str, file_name: &str) -> Result<(), CodegenError> {
    let script =
        "import sys; compile(sys.stdin.buffer.read().decode('utf-8'), sys.argv[1], 'exec')";
    let child = Command::new("python3")
        .args(["-c", script, file_name])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(CodegenError::io("python3", e)),
    };
    let mut stdin = child.stdin.take().expect("piped stdin");
    let src = source.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&src));
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
}
