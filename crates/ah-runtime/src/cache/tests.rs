//! Tests of the pick cache: lookups, guards, hostile files, sharing.

use super::*;
use ah_core::context::Context;
use ah_core::metadata::DeviceIdentity;

fn fp() -> DeviceFingerprint {
    let mut f = DeviceFingerprint::new("NVIDIA H100 80GB HBM3", DeviceIdentity::H100);
    f.driver_version = "580.65.06".into();
    f.library_versions.insert("cublas".into(), "13.0".into());
    f
}

fn key(m: i64) -> CacheKey {
    let mut c = Context::new();
    c.add("m", m).add_categorical("dtype", "torch.float16");
    CacheKey::new("pad_mm", &c, &["orig".into(), "pad".into()])
}

#[test]
fn hit_and_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/picks.json");
    let mut cache = PickCache::open(&path, fp()).unwrap();
    assert!(cache.warnings().is_empty());
    assert_eq!(cache.lookup(&key(1)), Lookup::Miss);
    cache.put(&key(1), "pad").unwrap();
    assert_eq!(cache.get(&key(1)), Some("pad".into()));
    assert_eq!(cache.get(&key(2)), None);
    // Persistent: a new process sees it.
    let again = PickCache::open_unshared(&path, fp()).unwrap();
    assert_eq!(again.get(&key(1)), Some("pad".into()));
    assert_eq!(again.len(), 1);
    // Key covers the choice list and the context.
    let mut c = Context::new();
    c.add("m", 1i64).add_categorical("dtype", "torch.float16");
    assert_eq!(
        CacheKey::new("pad_mm", &c, &["orig".into(), "pad".into()]),
        key(1)
    );
    assert_ne!(
        CacheKey::new("pad_mm", &c, &["pad".into(), "orig".into()]),
        key(1)
    );
    assert_ne!(
        CacheKey::new("mm", &c, &["orig".into(), "pad".into()]),
        key(1)
    );
    // No temp file left behind.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["picks.json"]);
}

#[test]
fn stale_guard_is_ignored_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    PickCache::open(&path, fp())
        .unwrap()
        .put(&key(1), "pad")
        .unwrap();
    for change in 0..3 {
        let mut other = fp();
        match change {
            0 => other.driver_version = "590.0".into(),
            1 => {
                other
                    .library_versions
                    .insert("cublas".into(), "13.1".into());
            }
            _ => other.heuristic_version = "9.9.9".into(),
        }
        let cache = PickCache::open(&path, other.clone()).unwrap();
        match cache.lookup(&key(1)) {
            Lookup::Stale { reason } => assert!(!reason.is_empty()),
            l => panic!("{change}: {l:?}"),
        }
        assert_eq!(cache.get(&key(1)), None);
    }
    let mut other = fp();
    other.driver_version = "590.0".into();
    let mut cache = PickCache::open(&path, other.clone()).unwrap();
    cache.put(&key(1), "orig").unwrap();
    assert_eq!(
        PickCache::open(&path, other).unwrap().get(&key(1)),
        Some("orig".into())
    );
    assert_eq!(
        PickCache::open(&path, fp()).unwrap().get(&key(1)),
        None,
        "replaced, not kept twice"
    );
}

#[test]
fn concurrent_puts_never_corrupt_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    std::thread::scope(|s| {
        for t in 0..4 {
            let path = &path;
            s.spawn(move || {
                let mut cache = PickCache::open(path, fp()).unwrap();
                for i in 0..10 {
                    cache.put(&key(t * 100 + i), "pad").unwrap();
                }
            });
        }
    });
    let cache = PickCache::open(&path, fp()).unwrap();
    assert!(cache.warnings().is_empty(), "{:?}", cache.warnings());
    assert_eq!(cache.len(), 40, "no pick lost");
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 1, "no temp files left");
}

#[test]
fn fingerprint_hash_is_stable_and_sensitive() {
    assert_eq!(fp().hash(), fp().hash());
    let mut o = fp();
    o.name = "NVIDIA H200".into();
    assert_ne!(o.hash(), fp().hash());
    assert_eq!(fp().hash().len(), 64);
}

/// Asserts that opening `path` fails with a message naming the file and containing `what`,
/// and that the file is unchanged.
fn assert_refused(path: &Path, what: &str) {
    let before = std::fs::read(path).ok();
    let err = PickCache::open_unshared(path, fp())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains(what), "{err}");
    assert!(err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read(path).ok(), before, "the file was changed");
}

fn journal(lines: &[&str]) -> String {
    let mut s = String::from("{\"format\":\"autoheuristic-rs pick cache\",\"version\":2}\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// A cache with picks for `key(0..n)`, written by another store; its text.
fn written(path: &Path, n: i64) -> String {
    let mut c = PickCache::open_unshared(path, fp()).unwrap();
    for i in 0..n {
        c.put(&key(i), "pad").unwrap();
    }
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_model_json_or_other_json_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("PadMMA100.model.json");
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../generated/ah-heuristics/models/PadMMA100.model.json");
    std::fs::copy(&model, &path).unwrap();
    assert_refused(&path, "not a pick cache (a JSON object with keys");
    std::fs::write(&path, "[1, 2]").unwrap();
    assert_refused(&path, "JSON array");
    std::fs::write(&path, "name,choice\n1,a\n").unwrap();
    assert_refused(&path, "not JSON lines of a pick cache");
    std::fs::write(&path, b"{\"format\": \"other\", \"version\": 7}\n").unwrap();
    assert_refused(&path, "not a pick cache");
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    std::fs::write(
        &path,
        "{\"format\":\"autoheuristic-rs pick cache\",\"version\":3}\n{\"new\":1}\n",
    )
    .unwrap();
    assert_refused(
        &path,
        "version 3 is newer than this build reads (version 2)",
    );
    std::fs::write(
        &path,
        "{\"format\": \"autoheuristic-rs pick cache\", \"version\": 9, \"entries\": {}}",
    )
    .unwrap();
    assert_refused(&path, "version 9 is newer");
}

#[test]
fn a_directory_is_refused_and_a_truncated_old_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("dir");
    std::fs::create_dir(&sub).unwrap();
    assert_refused(&sub, "a directory");
    let path = dir.path().join("picks.json");
    std::fs::write(
        &path,
        b"{\"format\": \"autoheuristic-rs pick cache\", \"vers",
    )
    .unwrap();
    assert_refused(&path, "not JSON");
}

#[test]
fn malformed_entries_are_dropped_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let text = written(&path, 3);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 4, "{text}");
    let bad_guard = lines[1].replacen("\"guard\":\"", "\"guard\":\"ff", 1);
    let spoofed = lines[0].replacen("H100", "H200", 1);
    std::fs::write(
        &path,
        journal(&[
            lines[0],
            lines[1],
            "{\"guard\": tru",
            &bad_guard,
            "{\"guard\":\"0123456789abcdef\"}",
            &spoofed,
            lines[2],
            lines[3],
        ]),
    )
    .unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    let w = cache.take_warnings();
    assert_eq!(w.len(), 4, "{w:#?}");
    assert!(
        w[0].contains("picks.json:4: malformed pick-cache entry dropped"),
        "{w:?}"
    );
    assert!(
        w[1].contains(":5:") && w[1].contains("unknown guard"),
        "{w:?}"
    );
    assert!(w[2].contains(":6:") && w[2].contains("neither"), "{w:?}");
    assert!(
        w[3].contains(":7:") && w[3].contains("not its fingerprint's hash"),
        "{w:?}"
    );
    assert_eq!(cache.len(), 3);
    for i in 0..3 {
        assert_eq!(cache.get(&key(i)), Some("pad".into()), "{i}");
    }
    cache.put(&key(3), "orig").unwrap();
    let again = PickCache::open_unshared(&path, fp()).unwrap();
    assert_eq!(again.len(), 4);
    assert_eq!(again.get(&key(3)), Some("orig".into()));
}

#[test]
fn a_torn_last_line_is_dropped_alone_when_the_next_pick_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let text = written(&path, 2);
    std::fs::write(&path, &text[..text.len() - 20]).unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(
        cache.warnings().is_empty(),
        "a torn line may still be written"
    );
    assert_eq!(cache.len(), 1);
    cache.put(&key(5), "orig").unwrap();
    assert_eq!(cache.take_warnings().len(), 1, "the torn line, dropped");
    let again = PickCache::open_unshared(&path, fp()).unwrap();
    assert_eq!(again.warnings().len(), 1);
    assert_eq!(again.get(&key(0)), Some("pad".into()));
    assert_eq!(again.get(&key(5)), Some("orig".into()));
    // A file cut inside its header is an empty cache being started; the next pick, under
    // the lock, starts it again.
    std::fs::write(&path, "{\"format\":\"autoheuristic-rs pi").unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(cache.is_empty());
    cache.put(&key(1), "pad").unwrap();
    let again = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());
    assert_eq!(again.get(&key(1)), Some("pad".into()));
}

#[test]
fn a_read_only_file_answers_and_refuses_writes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let text = written(&path, 2);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    assert_eq!(cache.get(&key(1)), Some("pad".into()));
    if std::fs::OpenOptions::new().append(true).open(&path).is_ok() {
        eprintln!("skipped the write half: this user may write read-only files (root)");
        return;
    }
    let err = cache.put(&key(7), "pad").unwrap_err().to_string();
    assert!(
        err.contains("picks.json: cannot write the pick cache"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn an_empty_file_is_an_empty_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    std::fs::write(&path, "").unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(cache.is_empty());
    cache.put(&key(1), "pad").unwrap();
    assert_eq!(
        PickCache::open_unshared(&path, fp()).unwrap().get(&key(1)),
        Some("pad".into())
    );
}

#[test]
fn a_version_1_file_is_read_and_rewritten_as_a_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let k = key(1);
    let v1 = serde_json::json!({
        "format": "autoheuristic-rs pick cache",
        "version": 1,
        "entries": {
            k.hash.clone(): {"choice": "pad", "key": k.description, "fingerprint": fp(), "timings": {"pad": 1.0}},
            "0000": {"choice": "pad", "key": "wrong hash", "fingerprint": fp()},
            key(2).hash: {"choice": 3},
        }
    });
    std::fs::write(&path, serde_json::to_string_pretty(&v1).unwrap()).unwrap();
    let mut cache = PickCache::open_unshared(&path, fp()).unwrap();
    assert_eq!(cache.take_warnings().len(), 2);
    assert_eq!(cache.get(&key(1)), Some("pad".into()));
    cache.put(&key(3), "orig").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("{\"format\":\"autoheuristic-rs pick cache\",\"version\":2}\n"));
    let again = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());
    assert_eq!(again.len(), 2);
    assert_eq!(again.get(&key(1)), Some("pad".into()));
    assert_eq!(again.get(&key(3)), Some("orig".into()));
}

#[test]
fn other_stores_see_appends_and_survive_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let mut a = PickCache::open_unshared(&path, fp()).unwrap();
    let mut b = PickCache::open_unshared(&path, fp()).unwrap();
    a.put(&key(1), "pad").unwrap();
    assert_eq!(b.get(&key(1)), None, "lookups do not read the file");
    b.refresh().unwrap();
    assert_eq!(b.get(&key(1)), Some("pad".into()));
    // Many picks of one key: superseded lines are compacted away.
    for i in 0..600 {
        a.put(&key(2), if i % 2 == 0 { "pad" } else { "orig" })
            .unwrap();
    }
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert!(lines < 300, "{lines} lines");
    // b's offset refers to the old file: it notices the rename, merges, and loses nothing.
    b.put(&key(3), "pad").unwrap();
    a.compact().unwrap();
    let fresh = PickCache::open_unshared(&path, fp()).unwrap();
    assert!(fresh.warnings().is_empty(), "{:?}", fresh.warnings());
    assert_eq!(fresh.len(), 3);
    assert_eq!(fresh.get(&key(2)), Some("orig".into()));
    assert_eq!(fresh.get(&key(3)), Some("pad".into()));
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 5);
}
