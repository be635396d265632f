//! The provenance sidecar (`FILE.provenance.json`): its reading, the checks a resume must pass
//! against it, and what a session records in it.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use ah_core::error::shown;
use ah_core::Metadata;
use ah_log::{infer_reps, log_text};
use serde_json::json;

use super::config::CollectConfig;
use super::error::{io_err, CollectError};
use crate::backend::{BackendInfo, BackendKind};
use crate::runner::{DynRunner, Feedback, Repetitions};

/// The provenance sidecar, or a fresh one when there is none. A sidecar that is not a JSON
/// object with a `sessions` list is refused, never replaced: it holds the session history.
pub(super) fn read_provenance(path: &Path) -> Result<serde_json::Value, CollectError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(json!({ "sessions": [] })),
        Err(e) => return Err(io_err(path)(e)),
    };
    let parsed = serde_json::from_slice::<serde_json::Value>(&bytes).map_err(|e| e.to_string());
    let mut v = match parsed {
        Ok(v) if v.is_object() && (v["sessions"].is_array() || v.get("sessions").is_none()) => v,
        Ok(_) => {
            return Err(corrupt_provenance(
                path,
                "not a JSON object with a `sessions` list",
            ))
        }
        Err(m) => return Err(corrupt_provenance(path, &m)),
    };
    if v.get("sessions").is_none() {
        v["sessions"] = json!([]);
    }
    Ok(v)
}

pub(super) fn corrupt_provenance(path: &Path, why: &str) -> CollectError {
    CollectError::Invalid(format!(
        "{}: the provenance sidecar is damaged ({why}); it holds the log's session history, so \
         it is not replaced: repair it, or move it aside (e.g. `mv {0} {0}.corrupt`) and run \
         again",
        shown(path)
    ))
}

/// Refuses a resume whose `--num-reps` or `--long-reps` differs from the log's: the ones the
/// provenance records (a log recorded before `--long-reps` measured every input `num_reps`
/// times), or without a record the count inferred from the rows (a different count would cut
/// valid rows as "incomplete" and measure every input again, or mix two protocols).
pub(super) fn check_reps(
    out: &Path,
    prov_path: &Path,
    provenance: &serde_json::Value,
    reps: Repetitions,
) -> Result<(), CollectError> {
    if let Some(prev) = provenance["num_reps"].as_u64() {
        if prev != reps.max as u64 {
            return Err(CollectError::Invalid(format!(
                "{}: was collected with --num-reps {prev} (see {}); resume with the same --num-reps, or write to another --out",
                shown(out),
                shown(prov_path)
            )));
        }
        let recorded = provenance["long_reps"].as_u64();
        let prev_long = recorded.unwrap_or(prev);
        if prev_long != reps.long as u64 {
            let why = if recorded.is_none() {
                " (recorded before --long-reps: every input measured --num-reps times)"
            } else {
                ""
            };
            // Without a long rule every input gets --num-reps, whatever --long-reps says.
            let rule = if reps.long == reps.max && prev_long < prev {
                " and a long rule (--long-run-ms above 0; the CPU has none)"
            } else {
                ""
            };
            return Err(CollectError::Invalid(format!(
                "{}: was collected with --long-reps {prev_long}{why} (see {}); resume without \
                 --long-reps or with --long-reps {prev_long}{rule}, or write to another --out",
                shown(out),
                shown(prov_path)
            )));
        }
        return Ok(());
    }
    let reps = reps.max;
    let bytes = match ah_log::read_bytes(out) {
        Ok(b) => b,
        Err(ah_core::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(())
        }
        Err(e) => return Err(e.into()),
    };
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(i) => &bytes[..=i],
        None => return Ok(()),
    };
    match infer_reps(log_text(out, complete)?) {
        Some(r) if r != reps => Err(CollectError::Invalid(format!(
            "{}: its rows hold {r} repetition(s) per input, but --num-reps is {reps}, and no \
             provenance sidecar ({}) records the count: resume with --num-reps {r}, or write to \
             another --out (another count would cut or duplicate inputs)",
            shown(out),
            shown(prov_path)
        ))),
        _ => Ok(()),
    }
}

/// The `--shapes` value that draws the distribution a sidecar records as `recorded`:
/// inductor_mm records its default mixture as `inductor` and each other one as `inductor_` and
/// its `--shapes` value (`inductor_decode`, ..., `inductor_windows`; a test in the CLI keeps
/// the two spellings in step).
fn shapes_arg(recorded: &str) -> &str {
    match recorded {
        "inductor" => "mix",
        other => other.strip_prefix("inductor_").unwrap_or(other),
    }
}

/// Whether the sidecar records an earlier session: the log is being resumed.
fn resumed(provenance: &serde_json::Value) -> bool {
    provenance["sessions"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
}

/// Refuses to resume a log drawn from another input distribution or catalogue; a sidecar
/// without `shapes` is PyTorch's generator (logs collected before pad_mm's `--shapes`).
pub(super) fn check_distribution(
    provenance: &serde_json::Value,
    runner: &dyn DynRunner,
    out: &Path,
    prov_path: &Path,
) -> Result<(), CollectError> {
    let Some(now) = runner.input_distribution().filter(|_| resumed(provenance)) else {
        return Ok(());
    };
    let prev = provenance["shapes"].as_str().unwrap_or("pytorch");
    let prev_sha = provenance["catalogue_sha256"].as_str();
    let prev_version = provenance["distribution_version"].as_u64().unwrap_or(1);
    let what = if prev != now.shapes {
        let arg = shapes_arg(prev);
        format!("--shapes {arg}; resume with --shapes {arg}")
    } else if prev_version != now.version {
        format!(
            "version {prev_version} of the --shapes {prev} draws, which this build times differently (version {}); collect anew",
            now.version
        )
    } else if now.catalogue_sha256.is_some() && prev_sha != now.catalogue_sha256.as_deref() {
        format!(
            "a catalogue of sha256 {}; resume with that --catalogue",
            prev_sha.unwrap_or("(none recorded)")
        )
    } else {
        return Ok(());
    };
    Err(CollectError::Invalid(format!(
        "{}: was collected with {what} (see {}), or write to another --out",
        shown(out),
        shown(prov_path)
    )))
}

/// Refuses to resume a log collected on another device model than `infos`' (the provenance's
/// `device_name`): two GPUs of one identity (an H100 and an H200 share PyTorch's capability and
/// shared memory, so the log's metadata cannot tell them apart) time the same choices
/// differently, and one log holds one model's timings.
pub(super) fn check_device(
    provenance: &serde_json::Value,
    infos: &[BackendInfo],
    out: &Path,
    prov_path: &Path,
) -> Result<(), CollectError> {
    let Some(before) = provenance["device_name"]
        .as_str()
        .filter(|_| resumed(provenance))
    else {
        return Ok(());
    };
    match infos.iter().find(|i| i.device_name != before) {
        None => Ok(()),
        Some(now) => Err(CollectError::Invalid(format!(
            "{}: was collected on {before} (see {}), and this run is on {}: one log holds one \
             device model's timings; collect into another --out",
            shown(out),
            shown(prov_path),
            now.device_name
        ))),
    }
}

/// Records in the sidecar what every session shares: the tool, the runner, the device, the
/// request and how it times.
pub(super) fn fill_provenance_head(
    v: &mut serde_json::Value,
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    metadata: &Metadata,
    infos: &[BackendInfo],
) {
    v["tool"] = json!("ah-collect");
    v["tool_version"] = json!(ah_core::TOOL_VERSION);
    v["runner"] = json!(runner.name());
    v["log"] = json!(cfg.out.file_name().map(|n| n.to_string_lossy().to_string()));
    v["metadata_line"] = json!(metadata.to_json_line());
    v["device_name"] = json!(infos[0].device_name);
    v["capability"] = json!(infos[0].capability);
    v["versions"] = json!(infos[0].versions);
    v["fingerprint"] = json!(infos[0].fingerprint());
    v["seed"] = json!(cfg.seed);
    v["num_samples"] = json!(cfg.num_samples);
    v["num_reps"] = json!(cfg.num_reps);
    v["long_reps"] = json!(cfg.repetitions().long);
    v["distinct"] = json!(cfg.distinct);
    if let Some(d) = runner.input_distribution() {
        v["shapes"] = json!(d.shapes);
        v["catalogue_sha256"] = json!(d.catalogue_sha256);
        v["distribution_version"] = json!(d.version);
    }
    v["exclude"] = json!(cfg
        .exclude
        .iter()
        .map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .collect::<Vec<_>>());
    let (label, method) = feedback_provenance(runner.feedback(), infos[0].kind);
    v["label"] = json!(label);
    v["timing_method"] = json!(method);
}

/// The provenance's `label` and `timing_method`: what the runner says of feedback it reports,
/// else the backend's timing protocol.
fn feedback_provenance(feedback: Feedback, kind: BackendKind) -> (&'static str, &'static str) {
    const TIMED: &str =
        "feedback = min over the timed calls of one benchmark (PyTorch's InductorBenchmarker); \
         FILE.medians.txt holds the median over the same calls";
    match (feedback, kind) {
        (Feedback::Reported { label, method }, _) => (label, method),
        (Feedback::Timed, BackendKind::Cuda) => (TIMED,
            "CUDA events around each call on one stream; 1 warm-up call per choice (first repetition); \
             L2 flush (memset of an L2-sized buffer) before every timed call; 5 estimation runs, \
             100 flushes, then max(min(100, 25 ms // estimate), 1) timed runs; min and median over all timed runs; \
             a call whose first run takes at least gpu_timing.long_run_ms is measured by that run alone \
             (after gpu_timing.rest_ms of rest when a long call came before, else run again after a rest, the faster kept), \
             a long warm-up together with one more run right after it (the faster kept; a short second run means PyTorch's protocol after all); \
             CUDA_MODULE_LOADING=EAGER unless set (the session's cuda_module_loading); \
             repetitions: num_reps per input, long_reps for an input whose every choice measured a min of at least \
             long_run_ms in its first repetition"),
        (Feedback::Timed, BackendKind::Cpu) => (TIMED,
            "wall clock (std::time::Instant) around each call; 1 warm-up call per choice; 3 estimation runs, \
             then max(min(20, 10 ms // estimate), 1) timed runs; no cache flush; min and median over all timed runs; \
             no long-call rule, so every input gets num_reps repetitions"),
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(super) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_recorded_distribution_is_named_as_the_cli_draws_it() {
        assert_eq!(super::shapes_arg("inductor"), "mix");
        assert_eq!(super::shapes_arg("inductor_decode"), "decode");
        assert_eq!(super::shapes_arg("inductor_attention"), "attention");
        assert_eq!(super::shapes_arg("inductor_tiny"), "tiny");
        assert_eq!(super::shapes_arg("inductor_tokens"), "tokens");
        assert_eq!(super::shapes_arg("inductor_windows"), "windows");
        assert_eq!(super::shapes_arg("real"), "real");
    }
}
