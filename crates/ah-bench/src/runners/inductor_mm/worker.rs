//! The Python worker that measures Inductor's max-autotune for [`super::InductorMmRunner`]:
//! one long-lived process per GPU, spoken to in JSON lines (`python/ah_inductor/worker.py`
//! documents the protocol). The worker's source is compiled into this binary and written to a
//! temporary folder when a worker starts, so the tool needs no checkout beside it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// `python/ah_inductor/worker.py`.
const WORKER_PY: &str = include_str!("../../../../../python/ah_inductor/worker.py");
/// `python/ah_inductor/naming.py`.
const NAMING_PY: &str = include_str!("../../../../../python/ah_inductor/naming.py");
/// `python/ah_inductor/ptxas.py` (the worker aligns Triton's ptxas with `AH_INDUCTOR_PTXAS=align`).
const PTXAS_PY: &str = include_str!("../../../../../python/ah_inductor/ptxas.py");
/// Lines of the worker's stderr kept for error messages.
const STDERR_TAIL: usize = 40;
/// The longest a worker may take to start (import PyTorch, compile its start-up graphs).
const START_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest one GEMM may take (two compiles, autotuning of every choice, compiled truth).
pub const MEASURE_TIMEOUT: Duration = Duration::from_secs(900);

/// The Python interpreter: `$AH_PYTHON`, else `python3`.
pub fn python() -> OsString {
    std::env::var_os("AH_PYTHON").unwrap_or_else(|| "python3".into())
}

/// Which engine the worker runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// PyTorch's Inductor on a CUDA GPU.
    Torch,
    /// Made-up deterministic answers without PyTorch (tests of the protocol).
    Fake,
}

/// How the worker keys Triton's cache (`AH_INDUCTOR_PTXAS`; `python/ah_inductor/worker.py`):
/// as PyTorch 2.11 with Triton 3.6 leaves it, which compiles every max-autotune template a
/// second time, or on the ptxas of Inductor's compile workers, as the generated handler's
/// `install()` does. The two measure different compile-time prices, recorded in each extras
/// line (`worker.settings.ah_ptxas`), and one log holds one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ptxas {
    /// As PyTorch leaves it (`as-is`, the default).
    #[default]
    AsIs,
    /// One ptxas (`align`).
    Align,
}

impl Ptxas {
    /// The environment variable that chooses it.
    pub const VAR: &'static str = "AH_INDUCTOR_PTXAS";

    /// Its name, as the variable and the extras lines spell it.
    pub fn name(self) -> &'static str {
        match self {
            Ptxas::AsIs => "as-is",
            Ptxas::Align => "align",
        }
    }

    /// The mode named `name`.
    pub fn parse(name: &str) -> Result<Ptxas, String> {
        [Ptxas::AsIs, Ptxas::Align]
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| format!("{}={name:?}: expected as-is or align", Self::VAR))
    }

    /// The mode [`Self::VAR`] chooses (unset: [`Ptxas::AsIs`]).
    pub fn from_env() -> Result<Ptxas, String> {
        match std::env::var(Self::VAR) {
            Ok(v) => Self::parse(&v),
            Err(std::env::VarError::NotPresent) => Ok(Ptxas::AsIs),
            Err(e) => Err(format!("{}: {e}", Self::VAR)),
        }
    }
}

/// Why a worker could not answer.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The interpreter could not be started.
    #[error("could not start `{python}`: {source}")]
    Spawn {
        /// The interpreter.
        python: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The worker started but said it cannot measure (no PyTorch, no GPU, ...).
    #[error("the worker cannot measure: {0}")]
    Unavailable(String),
    /// The worker exited or broke the protocol.
    #[error("the worker stopped answering ({reason}); its last output:\n{tail}")]
    Died {
        /// What was seen.
        reason: String,
        /// The end of its stderr.
        tail: String,
    },
    /// The worker answered that this GEMM failed (it goes on with the next one).
    #[error("{0}")]
    Failed(String),
}

/// One running worker.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    hello: Value,
    next_id: u64,
    _dir: tempfile::TempDir,
}

impl Worker {
    /// Starts a worker that keys Triton's cache as `ptxas` says; `device` restricts it to one
    /// CUDA ordinal (`CUDA_VISIBLE_DEVICES`).
    pub fn spawn(
        engine: Engine,
        ptxas: Ptxas,
        device: Option<usize>,
    ) -> Result<Worker, WorkerError> {
        let python = python();
        let spawn_err = |source| WorkerError::Spawn {
            python: python.to_string_lossy().into_owned(),
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("ah-inductor-worker-")
            .tempdir()
            .map_err(spawn_err)?;
        let pkg = dir.path().join("ah_inductor");
        std::fs::create_dir(&pkg)
            .and_then(|()| std::fs::write(pkg.join("__init__.py"), ""))
            .and_then(|()| std::fs::write(pkg.join("worker.py"), WORKER_PY))
            .and_then(|()| std::fs::write(pkg.join("naming.py"), NAMING_PY))
            .and_then(|()| std::fs::write(pkg.join("ptxas.py"), PTXAS_PY))
            .map_err(spawn_err)?;
        let mut cmd = Command::new(&python);
        cmd.arg(pkg.join("worker.py"))
            .args([
                "--engine",
                if engine == Engine::Fake {
                    "fake"
                } else {
                    "torch"
                },
            ])
            .env("PYTHONUNBUFFERED", "1")
            .env(Ptxas::VAR, ptxas.name())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(d) = device {
            cmd.env("CUDA_VISIBLE_DEVICES", visible_device(d));
        }
        // Its own process group: a Ctrl-C (or a signal to the collection's group) stops the
        // collection after the input in flight, which needs the worker alive to finish.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(spawn_err)?;
        let stdin = child.stdin.take().expect("piped");
        let lines = forward_lines(child.stdout.take().expect("piped"));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        keep_tail(child.stderr.take().expect("piped"), Arc::clone(&stderr));
        let mut w = Worker {
            child,
            stdin,
            lines,
            stderr,
            hello: Value::Null,
            next_id: 0,
            _dir: dir,
        };
        w.hello = w.read_hello()?;
        Ok(w)
    }

    /// What the worker said of itself: versions, device, Inductor settings.
    pub fn hello(&self) -> &Value {
        &self.hello
    }

    fn read_hello(&mut self) -> Result<Value, WorkerError> {
        let line = self.next_line(START_TIMEOUT, "starting")?;
        let v: Value = serde_json::from_str(&line).map_err(|e| self.died(format!("{e}")))?;
        if let Some(e) = v.get("hello_error").and_then(Value::as_str) {
            return Err(WorkerError::Unavailable(e.to_string()));
        }
        v.get("hello")
            .cloned()
            .ok_or_else(|| self.died(format!("expected a hello, got {line}")))
    }

    /// Measures one GEMM (`gemm` as the worker's protocol spells it).
    pub fn measure(&mut self, gemm: &Value) -> Result<Value, WorkerError> {
        self.next_id += 1;
        let id = self.next_id;
        let request = serde_json::json!({ "id": id, "gemm": gemm });
        writeln!(self.stdin, "{request}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| self.died(format!("writing the request: {e}")))?;
        let line = self.next_line(MEASURE_TIMEOUT, "measuring")?;
        let answer: Value = serde_json::from_str(&line)
            .map_err(|e| self.died(format!("unreadable answer ({e}): {line}")))?;
        if answer.get("id").and_then(Value::as_u64) != Some(id) {
            return Err(self.died(format!("answer to another request: {line}")));
        }
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(answer);
        }
        let error = answer["error"]
            .as_str()
            .unwrap_or("no reason given")
            .to_string();
        Err(WorkerError::Failed(error))
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    fn next_line(&mut self, timeout: Duration, doing: &str) -> Result<String, WorkerError> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(self.died(format!("no answer after {} s {doing}", timeout.as_secs())))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(self.died(format!("exited while {doing}: {status}")))
            }
        }
    }

    fn died(&self, reason: String) -> WorkerError {
        let tail = self
            .stderr
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        WorkerError::Died { reason, tail }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{{\"op\": \"quit\"}}");
        let _ = self.stdin.flush();
        for _ in 0..50 {
            if self.exited() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `CUDA_VISIBLE_DEVICES` for ordinal `d`: the `d`-th entry of the current list when one is
/// set (ordinals count within it), else `d`.
fn visible_device(d: usize) -> String {
    std::env::var("CUDA_VISIBLE_DEVICES")
        .ok()
        .and_then(|v| v.split(',').nth(d).map(|s| s.trim().to_string()))
        .unwrap_or_else(|| d.to_string())
}

fn forward_lines(out: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn keep_tail(err: impl std::io::Read + Send + 'static, tail: Arc<Mutex<VecDeque<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if let Ok(mut t) = tail.lock() {
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        }
    });
}
