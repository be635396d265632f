//! The guarded pick cache: the choice that autotuning picked for an input, persisted and reused.
//!
//! When a heuristic is unsure, the runtime benchmarks the choices once and stores the winner
//! here (design rule 6; PyTorch's multi-kernel `picked_kernel` cache, spec section 13). An entry
//! is keyed by the optimization name, the context's values and the choice list ([`CacheKey`])
//! and guarded by the [`DeviceFingerprint`] (device, driver, library and heuristic versions): an
//! entry whose guard differs from the current one is ignored and replaced, never trusted.
//!
//! The file is an append-only JSON-lines journal that several processes can share: it is read
//! once per process (every [`PickCache`] on the same path shares one in-memory store, so a
//! lookup is a hash-map probe), each [`PickCache::put`] appends one line under the file's lock
//! after reading what others appended, and superseded lines are compacted away now and then
//! (journal format and protocol: `journal.rs`). A file that is not a pick cache, or one of a
//! newer version, is refused with a [`CacheError`] and never written; a malformed entry is
//! dropped with a warning ([`PickCache::warnings`]), the rest of the file is kept. A version-1
//! file (one JSON object) is read and rewritten as a journal on the first pick. Nothing here
//! panics or prints.

mod journal;
mod key;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use journal::{Entry, Store};

pub use journal::CacheError;
pub use key::{CacheKey, DeviceFingerprint};

/// A guarded pick cache: one journal file, loaded once per process and shared by every
/// `PickCache` opened on the same path (see the [module docs](self)).
#[derive(Debug)]
pub struct PickCache {
    path: PathBuf,
    fingerprint: DeviceFingerprint,
    guard: journal::GuardId,
    store: Arc<Mutex<Store>>,
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

/// The process's stores, one per (absolute) path: the file is read once per process.
fn shared_store(path: &Path) -> Arc<Mutex<Store>> {
    static STORES: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<Store>>>>> = OnceLock::new();
    let key = journal::store_path(path);
    let mut stores = STORES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    stores
        .entry(key.clone())
        .or_insert_with(|| Arc::new(Mutex::new(Store::new(key))))
        .clone()
}

impl PickCache {
    /// Opens the cache at `path` for the current device fingerprint. The first open in a
    /// process reads the file; later ones read only what other processes appended since (one
    /// `stat` when nothing changed). A missing or empty file is an empty cache; malformed
    /// entries are dropped with a [warning](Self::warnings). A file that is not a pick cache,
    /// or one of a newer version, is an error and is never written.
    pub fn open(
        path: impl AsRef<Path>,
        fingerprint: DeviceFingerprint,
    ) -> Result<Self, CacheError> {
        let path = path.as_ref().to_path_buf();
        let store = shared_store(&path);
        Self::open_store(path, fingerprint, store)
    }

    /// Opens `path` with its own store, as another process would (tests only).
    #[cfg(test)]
    fn open_unshared(
        path: impl AsRef<Path>,
        fingerprint: DeviceFingerprint,
    ) -> Result<Self, CacheError> {
        let path = path.as_ref().to_path_buf();
        let store = Arc::new(Mutex::new(Store::new(path.clone())));
        Self::open_store(path, fingerprint, store)
    }

    fn open_store(
        path: PathBuf,
        fingerprint: DeviceFingerprint,
        store: Arc<Mutex<Store>>,
    ) -> Result<Self, CacheError> {
        let warnings = lock(&store).refresh()?;
        Ok(Self {
            path,
            guard: journal::guard_id(&fingerprint),
            fingerprint,
            store,
            warnings,
        })
    }

    /// Reads what other processes appended since the last open, refresh or put (lookups alone
    /// never touch the file).
    pub fn refresh(&mut self) -> Result<(), CacheError> {
        let w = lock(&self.store).refresh()?;
        self.warnings.extend(w);
        Ok(())
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

    /// Like [`get`](Self::get), telling a miss from a stale entry. A hash-map lookup in
    /// memory; the file is not read.
    pub fn lookup(&self, key: &CacheKey) -> Lookup {
        let store = lock(&self.store);
        let Some(e) = journal::key_id(&key.hash).and_then(|id| store.entries.get(&id)) else {
            return Lookup::Miss;
        };
        if e.guard != self.guard {
            return Lookup::Stale {
                reason: match store.guards.get(&e.guard) {
                    Some(old) => guard_difference(old, &self.fingerprint),
                    None => format!("unknown guard {:016x}", e.guard),
                },
            };
        }
        if e.key != key.description {
            // A hash collision would be astronomically unlikely; treat it as a miss.
            return Lookup::Miss;
        }
        Lookup::Hit(e.choice.clone())
    }

    /// Stores a pick under the current guard, replacing any entry for the key. Under the
    /// file's lock it first reads what other processes appended, then appends one line: no
    /// other process's pick is lost.
    pub fn put(&mut self, key: &CacheKey, choice: &str) -> Result<(), CacheError> {
        self.put_with_timings(key, choice, BTreeMap::new())
    }

    /// [`put`](Self::put) recording the measured times too (non-finite ones are left out).
    pub fn put_with_timings(
        &mut self,
        key: &CacheKey,
        choice: &str,
        timings: BTreeMap<String, f64>,
    ) -> Result<(), CacheError> {
        let entry = Entry {
            key: key.description.clone(),
            choice: choice.to_string(),
            guard: self.guard,
            timings: timings.into_iter().filter(|(_, t)| t.is_finite()).collect(),
        };
        let w = lock(&self.store).put(&self.fingerprint, entry)?;
        self.warnings.extend(w);
        Ok(())
    }

    /// Rewrites the file with one line per live entry (done automatically when superseded
    /// lines dominate). Takes the file's lock; merges what others appended first.
    pub fn compact(&mut self) -> Result<(), CacheError> {
        let w = lock(&self.store).compact_locked()?;
        self.warnings.extend(w);
        Ok(())
    }

    /// Number of entries (any guard).
    pub fn len(&self) -> usize {
        lock(&self.store).entries.len()
    }

    /// True when the cache has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Problems met while reading the file (malformed entries dropped); the caller decides
    /// whether and how to show them.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Takes the warnings out.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
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

#[cfg(test)]
mod tests;
