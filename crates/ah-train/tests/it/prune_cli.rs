//! The `ah-prune` binary on bad input: clear errors naming the file, exit 2, nothing written.

use std::path::Path;
use std::process::Command;

fn prune(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ah-prune"))
        .args(args)
        .output()
        .expect("runs")
}

/// Logs of two runners do not train together: exit 2, the second log named, nothing written.
#[test]
fn logs_of_another_runner_are_refused_with_their_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("pad.txt");
    std::fs::copy(root.join("data/pad_mm_cpu.txt"), &other).unwrap();
    std::fs::write(dir.path().join("pad.txt.extras.jsonl"), "").unwrap();
    let out = dir.path().join("out");
    let o = prune(&[
        root.join("data/inductor_mm_h100.txt").as_os_str(),
        other.as_os_str(),
        "--no-codegen".as_ref(),
        "--output-dir".as_ref(),
        out.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("pad.txt:1:"), "{err}");
    assert!(err.contains("one runner and device"), "{err}");
    assert!(!out.exists());
}

/// Without a log it is a usage error (exit 2) that names what is missing.
#[test]
fn a_log_is_required() {
    let o = prune(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("<LOG>"));
}

/// `--op-harm-price` takes OP=S for a known op, once each: anything else exits 2 saying what
/// to write, before a log is read or anything is written.
#[test]
fn a_bad_op_harm_price_is_refused_with_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: [(&[&str], &str); 5] = [
        (&["--op-harm-price", "bmm"], "write OP=S"),
        (&["--op-harm-price", "conv=3"], "use mm, addmm or bmm"),
        (&["--op-harm-price", "bmm=soon"], "not a number of seconds"),
        (&["--op-harm-price", "bmm=-1"], "0 or more"),
        (
            &["--op-harm-price", "bmm=1", "--op-harm-price", "bmm=2"],
            "names bmm twice",
        ),
    ];
    for (flags, says) in cases {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "missing.txt".as_ref(),
            "--output-dir".as_ref(),
            out.as_os_str(),
        ];
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        let o = prune(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(!out.exists(), "{flags:?}");
    }
}
