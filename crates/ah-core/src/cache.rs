//! The guarded pick cache: the choice that autotuning picked for an input, persisted and reused.
//!
//! When a heuristic is unsure, the runtime benchmarks the choices once and stores the winner
//! here (design rule 6; PyTorch's multi-kernel `picked_kernel` cache, spec section 13). An entry
//! is keyed by the optimization name, the context's values and the choice list ([`CacheKey`])
//! and guarded by the [`DeviceFingerprint`] (device, driver, library and heuristic versions): an
//! entry whose guard differs from the current one is ignored and replaced, never trusted.
//!
//! The cache is one JSON file, rewritten atomically (temp file in the same folder, then rename)
//! on every [`PickCache::put`]. A corrupt or unreadable file is ignored with a warning
//! ([`PickCache::warnings`]); nothing here panics or prints.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::metadata::DeviceIdentity;

/// Everything a cached pick depends on besides the input: if any of it changes, the pick is
/// stale.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceFingerprint {
    /// Device name (`NVIDIA H100 80GB HBM3`; `non_cuda_device` without CUDA).
    pub name: String,
    /// Max opt-in shared memory per block.
    pub shared_memory: u64,
    /// Compute capability.
    pub device_capa: (u32, u32),
    /// Driver version (`580.65.06`), empty when unknown.
    pub driver_version: String,
    /// Versions of the libraries the choices run on (`cuda`, `cublas`, ...).
    pub library_versions: BTreeMap<String, String>,
    /// Version of the heuristic (or heuristics crate) that was unsure.
    pub heuristic_version: String,
}

impl DeviceFingerprint {
    /// A fingerprint with only the device identity and name known.
    pub fn new(name: impl Into<String>, identity: DeviceIdentity) -> Self {
        Self {
            name: name.into(),
            shared_memory: identity.shared_memory,
            device_capa: identity.device_capa,
            driver_version: String::new(),
            library_versions: BTreeMap::new(),
            heuristic_version: crate::TOOL_VERSION.to_string(),
        }
    }

    /// The device identity part.
    pub fn identity(&self) -> DeviceIdentity {
        DeviceIdentity {
            shared_memory: self.shared_memory,
            device_capa: self.device_capa,
        }
    }

    /// sha256 (hex) of the fingerprint's canonical JSON.
    pub fn hash(&self) -> String {
        let json = serde_json::to_string(self).expect("a fingerprint serializes");
        hex(&Sha256::digest(json.as_bytes()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of one cached pick: optimization name, the context's feature names and values (as
/// Python's `str()` prints them) and the choice list, hashed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey {
    /// sha256 (hex) of the canonical description.
    pub hash: String,
    /// The canonical description: `name|f1=v1,f2=v2|c1,c2` (kept for humans reading the file).
    pub description: String,
}

impl CacheKey {
    /// The key for an optimization name, a (raw, not augmented) context and the choices.
    pub fn new(name: &str, ctx: &Context, choices: &[String]) -> Self {
        let features: Vec<String> = ctx
            .features()
            .iter()
            .map(|f| format!("{}={}", f.name, f.value))
            .collect();
        let description = format!("{name}|{}|{}", features.join(","), choices.join(","));
        Self {
            hash: hex(&Sha256::digest(description.as_bytes())),
            description,
        }
    }
}

impl CacheKey {
    /// The key for an optimization name, an inputs key (the select-algorithm flavour's
    /// description of the inputs: shapes, strides, dtypes) and the choices.
    pub fn for_inputs(name: &str, inputs_key: &str, choices: &[String]) -> Self {
        let description = format!("{name}|inputs={inputs_key}|{}", choices.join(","));
        Self {
            hash: hex(&Sha256::digest(description.as_bytes())),
            description,
        }
    }
}

/// One stored pick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The chosen choice.
    pub choice: String,
    /// The key's description.
    pub key: String,
    /// The guard the pick was made under.
    pub fingerprint: DeviceFingerprint,
    /// Measured times (ms) per choice, when known.
    #[serde(default)]
    pub timings: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct CacheFile {
    format: String,
    version: u32,
    entries: BTreeMap<String, CacheEntry>,
}

const FORMAT: &str = "autoheuristic-rs pick cache";
const VERSION: u32 = 1;

/// A persistent, guarded pick cache (one JSON file).
#[derive(Debug)]
pub struct PickCache {
    path: PathBuf,
    fingerprint: DeviceFingerprint,
    entries: BTreeMap<String, CacheEntry>,
    warnings: Vec<String>,
}

/// Result of a lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// A pick made under the current guard.
    Hit(String),
    /// No entry for the key.
    Miss,
    /// An entry made under another guard: ignored (and replaced by the next `put`).
    Stale {
        /// What differs, for messages.
        reason: String,
    },
}

impl PickCache {
    /// Opens (or starts) the cache at `path` for the current device fingerprint. A missing file
    /// is an empty cache; a corrupt or unreadable one is ignored with a warning.
    pub fn open(path: impl AsRef<Path>, fingerprint: DeviceFingerprint) -> Self {
        let path = path.as_ref().to_path_buf();
        let mut warnings = Vec::new();
        let entries = load(&path, &mut warnings);
        Self {
            path,
            fingerprint,
            entries,
            warnings,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current guard.
    pub fn fingerprint(&self) -> &DeviceFingerprint {
        &self.fingerprint
    }

    /// The pick for `key` if one was made under the current guard.
    pub fn get(&self, key: &CacheKey) -> Option<String> {
        match self.lookup(key) {
            Lookup::Hit(c) => Some(c),
            _ => None,
        }
    }

    /// Like [`get`](Self::get), telling a miss from a stale entry.
    pub fn lookup(&self, key: &CacheKey) -> Lookup {
        let Some(e) = self.entries.get(&key.hash) else {
            return Lookup::Miss;
        };
        if e.fingerprint != self.fingerprint {
            return Lookup::Stale {
                reason: guard_difference(&e.fingerprint, &self.fingerprint),
            };
        }
        if e.key != key.description {
            // A hash collision would be astronomically unlikely; treat it as a miss.
            return Lookup::Miss;
        }
        Lookup::Hit(e.choice.clone())
    }

    /// Stores a pick under the current guard (replacing any entry for the key) and rewrites the
    /// file atomically. Entries other processes added since [`open`](Self::open) are kept.
    pub fn put(&mut self, key: &CacheKey, choice: &str) -> Result<()> {
        self.put_with_timings(key, choice, BTreeMap::new())
    }

    /// [`put`](Self::put) recording the measured times too.
    pub fn put_with_timings(
        &mut self,
        key: &CacheKey,
        choice: &str,
        timings: BTreeMap<String, f64>,
    ) -> Result<()> {
        let mut ignored = Vec::new();
        let mut entries = load(&self.path, &mut ignored);
        entries.insert(
            key.hash.clone(),
            CacheEntry {
                choice: choice.to_string(),
                key: key.description.clone(),
                fingerprint: self.fingerprint.clone(),
                timings: timings.into_iter().filter(|(_, t)| t.is_finite()).collect(),
            },
        );
        let file = CacheFile {
            format: FORMAT.into(),
            version: VERSION,
            entries,
        };
        let mut json = serde_json::to_string_pretty(&file)
            .map_err(|e| Error::Other(format!("cannot serialize the pick cache: {e}")))?;
        json.push('\n');
        write_atomic(&self.path, json.as_bytes())?;
        self.entries = file.entries;
        Ok(())
    }

    /// Number of entries (any guard).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the cache has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Problems met while reading the file (corrupt JSON, unreadable file); the caller decides
    /// whether and how to show them.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Takes the warnings out.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

fn load(path: &Path, warnings: &mut Vec<String>) -> BTreeMap<String, CacheEntry> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return BTreeMap::new(),
        Err(e) => {
            warnings.push(format!(
                "{}: cannot read the pick cache ({e}); starting with an empty cache",
                path.display()
            ));
            return BTreeMap::new();
        }
    };
    match serde_json::from_slice::<CacheFile>(&bytes) {
        Ok(f) if f.format == FORMAT && f.version == VERSION => f.entries,
        Ok(f) => {
            warnings.push(format!(
                "{}: not a version {VERSION} pick cache (format {:?}, version {}); ignored, it will be replaced",
                path.display(),
                f.format,
                f.version
            ));
            BTreeMap::new()
        }
        Err(e) => {
            warnings.push(format!(
                "{}: corrupt pick cache ({e}); ignored, it will be replaced on the next pick",
                path.display()
            ));
            BTreeMap::new()
        }
    }
}

fn guard_difference(old: &DeviceFingerprint, new: &DeviceFingerprint) -> String {
    let mut d = Vec::new();
    if old.name != new.name {
        d.push(format!("device {:?} vs {:?}", old.name, new.name));
    }
    if old.identity() != new.identity() {
        d.push(format!(
            "identity {:?} vs {:?}",
            old.identity(),
            new.identity()
        ));
    }
    if old.driver_version != new.driver_version {
        d.push(format!(
            "driver {:?} vs {:?}",
            old.driver_version, new.driver_version
        ));
    }
    if old.library_versions != new.library_versions {
        d.push(format!(
            "libraries {:?} vs {:?}",
            old.library_versions, new.library_versions
        ));
    }
    if old.heuristic_version != new.heuristic_version {
        d.push(format!(
            "heuristic version {:?} vs {:?}",
            old.heuristic_version, new.heuristic_version
        ));
    }
    d.join("; ")
}

/// Writes `bytes` to `path` atomically: a temp file in the same folder, synced, then renamed
/// over `path`. Creates the folder if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and per write, so concurrent writers never share a temp file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut cache = PickCache::open(&path, fp());
        assert!(cache.warnings().is_empty());
        assert_eq!(cache.lookup(&key(1)), Lookup::Miss);
        cache.put(&key(1), "pad").unwrap();
        assert_eq!(cache.get(&key(1)), Some("pad".into()));
        assert_eq!(cache.get(&key(2)), None);
        // Persistent: a new process sees it.
        let again = PickCache::open(&path, fp());
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
        PickCache::open(&path, fp()).put(&key(1), "pad").unwrap();
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
            let cache = PickCache::open(&path, other.clone());
            match cache.lookup(&key(1)) {
                Lookup::Stale { reason } => assert!(!reason.is_empty()),
                l => panic!("{change}: {l:?}"),
            }
            assert_eq!(cache.get(&key(1)), None);
        }
        let mut other = fp();
        other.driver_version = "590.0".into();
        let mut cache = PickCache::open(&path, other.clone());
        cache.put(&key(1), "orig").unwrap();
        assert_eq!(
            PickCache::open(&path, other).get(&key(1)),
            Some("orig".into())
        );
        assert_eq!(
            PickCache::open(&path, fp()).get(&key(1)),
            None,
            "replaced, not kept twice"
        );
    }

    #[test]
    fn corrupt_file_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("picks.json");
        std::fs::write(
            &path,
            b"{\"format\": \"autoheuristic-rs pick cache\", \"vers",
        )
        .unwrap();
        let mut cache = PickCache::open(&path, fp());
        assert_eq!(cache.warnings().len(), 1);
        assert!(
            cache.warnings()[0].contains("corrupt pick cache"),
            "{:?}",
            cache.warnings()
        );
        assert_eq!(cache.get(&key(1)), None);
        cache.put(&key(1), "pad").unwrap();
        let again = PickCache::open(&path, fp());
        assert!(again.warnings().is_empty());
        assert_eq!(again.get(&key(1)), Some("pad".into()));
        std::fs::write(&path, b"[1, 2]").unwrap();
        assert_eq!(PickCache::open(&path, fp()).warnings().len(), 1);
        std::fs::write(
            &path,
            b"{\"format\": \"other\", \"version\": 7, \"entries\": {}}",
        )
        .unwrap();
        assert!(PickCache::open(&path, fp()).warnings()[0].contains("not a version 1 pick cache"));
        // A folder where the file should be: a warning on open, an error (not a panic) on put.
        let bad = dir.path().join("dir");
        std::fs::create_dir(&bad).unwrap();
        let mut cache = PickCache::open(&bad, fp());
        assert_eq!(cache.warnings().len(), 1);
        assert!(cache.put(&key(1), "pad").is_err());
    }

    #[test]
    fn concurrent_puts_never_corrupt_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("picks.json");
        std::thread::scope(|s| {
            for t in 0..4 {
                let path = &path;
                s.spawn(move || {
                    let mut cache = PickCache::open(path, fp());
                    for i in 0..10 {
                        cache.put(&key(t * 100 + i), "pad").unwrap();
                    }
                });
            }
        });
        let cache = PickCache::open(&path, fp());
        assert!(cache.warnings().is_empty(), "{:?}", cache.warnings());
        assert!(cache.len() >= 10, "{}", cache.len());
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
}
