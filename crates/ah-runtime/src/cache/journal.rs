//! The pick cache's file: an append-only JSON-lines journal, shared between processes.
//!
//! ```text
//! {"format":"autoheuristic-rs pick cache","version":2}
//! {"guard":"3f2a...","fingerprint":{"name":"NVIDIA H100 80GB HBM3",...}}
//! {"guard":"3f2a...","key":"pad_mm|m=4096,...|orig,pad","choice":"pad","timings":{...}}
//! ```
//!
//! The first line is the header; a guard line gives a [`DeviceFingerprint`] a short id (the
//! first 16 hex digits of its hash); a pick line names its guard and the key's description
//! (the key hash is its sha256, recomputed on load). A later pick of the same key replaces an
//! earlier one. A line that does not parse, names an unknown guard or a guard whose id is not
//! its hash is dropped with a warning; nothing else is.
//!
//! Writers append under an exclusive lock on the file itself (`File::lock`), after reading
//! what other processes appended since ([`Store::put`]); readers need no lock: they consume
//! complete lines only. When superseded lines outnumber live ones the writer compacts: the
//! merged state goes to a temp file that is renamed over the journal. A writer that waited
//! for the lock checks that the path still names the file it locked, and retries otherwise.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::key::DeviceFingerprint;

/// Why a pick cache cannot be used. The file is never changed when one of these is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The file is something else (another format, not JSON, a directory).
    #[error("{}: not a pick cache ({what}); it was left untouched: pass another cache file (--cache, AUTOHEURISTIC_CACHE_PATH) or move this one away", path.display())]
    Foreign {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        what: String,
    },
    /// A pick cache of a newer schema than this build reads.
    #[error("{}: pick cache version {found} is newer than this build reads (version {}); it was left untouched: use a newer autoheuristic-rs or another cache file", path.display(), VERSION)]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u64,
    },
    /// Reading the file failed.
    #[error("{}: cannot read the pick cache: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Locking or writing the file failed (read-only file or folder, full disk).
    #[error("{}: cannot write the pick cache: {source} (make the file and its folder writable, or pass another cache file)", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// The `format` field of the header.
pub(super) const FORMAT: &str = "autoheuristic-rs pick cache";
/// The journal's schema version (1 was one JSON object, rewritten on every pick).
pub(super) const VERSION: u64 = 2;

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    version: u64,
}

/// One line after the header: a guard (`fingerprint` set) or a pick (`key` and `choice` set).
#[derive(Serialize, Deserialize)]
struct Line {
    guard: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fingerprint: Option<DeviceFingerprint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    choice: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    timings: BTreeMap<String, f64>,
}

/// One entry of a version-1 file (read, then rewritten as a journal on the first pick).
#[derive(Deserialize)]
struct LegacyEntry {
    choice: String,
    key: String,
    fingerprint: DeviceFingerprint,
    #[serde(default)]
    timings: BTreeMap<String, f64>,
}

/// One stored pick.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub key: String,
    pub choice: String,
    pub guard: GuardId,
    pub timings: BTreeMap<String, f64>,
}

/// The in-memory state of one cache file, shared by every [`PickCache`](super::PickCache) of
/// the process that opened the same path.
#[derive(Debug)]
pub(super) struct Store {
    path: PathBuf,
    /// Key id → pick.
    pub entries: HashMap<KeyId, Entry>,
    /// Guard id → fingerprint.
    pub guards: HashMap<GuardId, DeviceFingerprint>,
    /// Bytes of the file consumed so far (complete lines only).
    offset: u64,
    /// The header line as read, to notice a file replaced in place.
    header: Vec<u8>,
    /// Identity of the file `offset` refers to.
    file: Option<FileId>,
    /// Lines consumed (header included), for line numbers and compaction.
    lines: usize,
    /// The file is a version-1 cache: read, not appendable.
    legacy: bool,
}

type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(m: &Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> FileId {
    (0, 0)
}

/// A guard's id: the first 64 bits of its fingerprint's hash (16 hex digits in the file).
pub(super) type GuardId = u64;

/// A key's id in memory: the first 128 bits of its sha256 (the `CacheKey` hash); the entry
/// also holds the whole description, compared on every hit.
pub(super) type KeyId = u128;

/// The guard id of a fingerprint.
pub(super) fn guard_id(fp: &DeviceFingerprint) -> GuardId {
    u64::from_str_radix(&fp.hash()[..16], 16).expect("a sha256 in hex")
}

fn guard_hex(g: GuardId) -> String {
    format!("{g:016x}")
}

/// The id of a `CacheKey` hash (hex); `None` when it is not one.
pub(super) fn key_id(hash: &str) -> Option<KeyId> {
    hash.get(..32)
        .and_then(|h| u128::from_str_radix(h, 16).ok())
}

fn key_hash(description: &str) -> KeyId {
    let digest = Sha256::digest(description.as_bytes());
    KeyId::from_be_bytes(digest[..16].try_into().expect("16 bytes"))
}

fn header_line() -> Vec<u8> {
    let mut h = serde_json::to_vec(&Header {
        format: FORMAT.into(),
        version: VERSION,
    })
    .expect("a header serializes");
    h.push(b'\n');
    h
}

fn line_bytes(line: &Line) -> Vec<u8> {
    let mut v = serde_json::to_vec(line).expect("a journal line serializes");
    v.push(b'\n');
    v
}

impl Store {
    /// An empty store for `path` (nothing read yet).
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            entries: HashMap::new(),
            guards: HashMap::new(),
            offset: 0,
            header: Vec::new(),
            file: None,
            lines: 0,
            legacy: false,
        }
    }

    fn reset(&mut self) {
        *self = Self::new(std::mem::take(&mut self.path));
    }

    /// Brings the store up to date with the file without locking it: one `stat` when nothing
    /// changed, the appended lines when the file grew, a full read when it was replaced.
    /// Returns warnings about dropped lines. A foreign file is an error and is left as it is.
    pub fn refresh(&mut self) -> Result<Vec<String>, CacheError> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.reset();
                return Ok(Vec::new());
            }
            Err(e) => return Err(self.read_error(e)),
        };
        if meta.is_dir() {
            return Err(CacheError::Foreign {
                path: self.path.clone(),
                what: "a directory".into(),
            });
        }
        if self.file == Some(file_id(&meta)) && meta.len() == self.offset {
            return Ok(Vec::new());
        }
        let mut file = File::open(&self.path).map_err(|e| self.read_error(e))?;
        self.refresh_from(&mut file)
    }

    fn read_error(&self, source: std::io::Error) -> CacheError {
        CacheError::Read {
            path: self.path.clone(),
            source,
        }
    }

    fn write_error(&self, source: std::io::Error) -> CacheError {
        CacheError::Write {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads what is new in the open `file`: the tail when it is the same journal, grown;
    /// everything otherwise.
    fn refresh_from(&mut self, file: &mut File) -> Result<Vec<String>, CacheError> {
        let meta = file.metadata().map_err(|e| self.read_error(e))?;
        let same = self.file == Some(file_id(&meta))
            && !self.legacy
            && self.offset > 0
            && meta.len() >= self.offset
            && self.header_unchanged(file)?;
        if !same {
            let mut bytes = Vec::new();
            file.seek(SeekFrom::Start(0))
                .and_then(|_| file.read_to_end(&mut bytes))
                .map_err(|e| self.read_error(e))?;
            return self.load(&bytes, file_id(&meta));
        }
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(self.offset))
            .and_then(|_| file.read_to_end(&mut tail))
            .map_err(|e| self.read_error(e))?;
        let mut warnings = Vec::new();
        self.consume(&tail, &mut warnings);
        Ok(warnings)
    }

    fn header_unchanged(&self, file: &mut File) -> Result<bool, CacheError> {
        let mut first = vec![0; self.header.len()];
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_exact(&mut first))
            .map_err(|e| self.read_error(e))?;
        Ok(first == self.header)
    }

    /// Replaces the state with the whole file's content.
    fn load(&mut self, bytes: &[u8], id: FileId) -> Result<Vec<String>, CacheError> {
        self.reset();
        self.file = Some(id);
        let mut warnings = Vec::new();
        if bytes.is_empty() {
            return Ok(warnings);
        }
        let first_end = bytes.iter().position(|&b| b == b'\n');
        let first = &bytes[..first_end.unwrap_or(bytes.len())];
        match serde_json::from_slice::<Header>(first) {
            Ok(h) if h.format == FORMAT && h.version == VERSION && first_end.is_some() => {
                self.consume(bytes, &mut warnings);
                Ok(warnings)
            }
            Ok(h) if h.format == FORMAT && h.version > VERSION => Err(CacheError::Newer {
                path: self.path.clone(),
                found: h.version,
            }),
            _ if first_end.is_none() && header_line().starts_with(bytes) => Ok(warnings),
            _ => self.load_whole(bytes, &mut warnings).map(|()| warnings),
        }
    }

    /// A file that is not a version-2 journal: a version-1 cache is read; anything else is
    /// refused.
    fn load_whole(&mut self, bytes: &[u8], warnings: &mut Vec<String>) -> Result<(), CacheError> {
        let foreign = |what: String| CacheError::Foreign {
            path: self.path.clone(),
            what,
        };
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| foreign(format!("not JSON lines of a pick cache: {e}")))?;
        let Some(obj) = value.as_object() else {
            return Err(foreign(format!("JSON {}, not a pick cache", kind(&value))));
        };
        if obj.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            let keys: Vec<&str> = obj.keys().take(6).map(String::as_str).collect();
            return Err(foreign(format!(
                "a JSON object with keys [{}], not a pick cache",
                keys.join(", ")
            )));
        }
        match obj.get("version").and_then(|v| v.as_u64()) {
            Some(1) => {}
            Some(v) if v > VERSION => {
                return Err(CacheError::Newer {
                    path: self.path.clone(),
                    found: v,
                })
            }
            v => return Err(foreign(format!("a pick cache of unknown version {v:?}"))),
        }
        let entries = obj.get("entries").and_then(|e| e.as_object());
        for (hash, value) in entries.into_iter().flatten() {
            match serde_json::from_value::<LegacyEntry>(value.clone()) {
                Ok(e) if key_id(hash) == Some(key_hash(&e.key)) => {
                    let guard = guard_id(&e.fingerprint);
                    self.guards.entry(guard).or_insert(e.fingerprint);
                    self.insert_pick(key_hash(&e.key), e.key, e.choice, guard, e.timings);
                }
                Ok(_) => warnings.push(self.dropped(0, "its key does not match its hash")),
                Err(err) => warnings.push(self.dropped(0, &err.to_string())),
            }
        }
        self.legacy = true;
        self.offset = bytes.len() as u64;
        Ok(())
    }

    fn dropped(&self, line: usize, why: &str) -> String {
        let at = if line == 0 {
            String::new()
        } else {
            format!(":{line}")
        };
        format!(
            "{}{at}: malformed pick-cache entry dropped ({why})",
            self.path.display()
        )
    }

    /// Applies the complete lines of `bytes` (which start at `self.offset`; at 0 the first
    /// line is the header, already checked); a last line without its newline is left for
    /// later (a writer may be appending it).
    fn consume(&mut self, bytes: &[u8], warnings: &mut Vec<String>) {
        let complete = match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => &bytes[..=i],
            None => return,
        };
        for line in complete[..complete.len() - 1].split(|&b| b == b'\n') {
            self.lines += 1;
            if self.offset == 0 && self.header.is_empty() {
                self.header = [line, b"\n"].concat();
                continue;
            }
            if let Err(why) = self.apply(line) {
                warnings.push(self.dropped(self.lines, &why));
            }
        }
        self.offset += complete.len() as u64;
    }

    fn apply(&mut self, line: &[u8]) -> Result<(), String> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let l: Line = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let guard = Some(&l.guard)
            .filter(|g| g.len() == 16)
            .and_then(|g| u64::from_str_radix(g, 16).ok())
            .ok_or_else(|| format!("unknown guard {:?}", l.guard))?;
        match (l.fingerprint, l.key, l.choice) {
            (Some(fp), None, None) => {
                if guard_id(&fp) != guard {
                    return Err("the guard's id is not its fingerprint's hash".into());
                }
                self.guards.insert(guard, fp);
            }
            (None, Some(key), Some(choice)) => {
                if !self.guards.contains_key(&guard) {
                    return Err(format!("unknown guard {:?}", l.guard));
                }
                self.insert_pick(key_hash(&key), key, choice, guard, l.timings);
            }
            _ => return Err("neither a guard nor a pick".into()),
        }
        Ok(())
    }

    fn insert_pick(
        &mut self,
        id: KeyId,
        key: String,
        choice: String,
        guard: GuardId,
        timings: BTreeMap<String, f64>,
    ) {
        let entry = Entry {
            key,
            choice,
            guard,
            timings,
        };
        self.entries.insert(id, entry);
    }

    /// Stores a pick: under the file's lock, reads what others appended, appends the pick
    /// (and its guard when the file lacks it), and compacts when superseded lines dominate.
    pub fn put(
        &mut self,
        fingerprint: &DeviceFingerprint,
        entry: Entry,
    ) -> Result<Vec<String>, CacheError> {
        let mut file = self.lock()?;
        let mut warnings = self.refresh_from(&mut file)?;
        if self.legacy {
            self.guards
                .entry(entry.guard)
                .or_insert_with(|| fingerprint.clone());
            self.insert_pick(
                key_hash(&entry.key),
                entry.key,
                entry.choice,
                entry.guard,
                entry.timings,
            );
            self.compact()?;
            return Ok(warnings);
        }
        let mut out = Vec::new();
        let len = file.metadata().map_err(|e| self.write_error(e))?.len();
        if self.offset == 0 {
            // Empty, or a torn header (the load refused anything else): start the file.
            if len > 0 {
                file.set_len(0).map_err(|e| self.write_error(e))?;
            }
            out = header_line();
        } else if len > self.offset {
            // We hold the lock, so an unterminated last line is a torn write: end it, so
            // that it is dropped alone instead of swallowing the line we append.
            out.push(b'\n');
        }
        if !self.guards.contains_key(&entry.guard) {
            out.extend(line_bytes(&Line {
                guard: guard_hex(entry.guard),
                fingerprint: Some(fingerprint.clone()),
                key: None,
                choice: None,
                timings: BTreeMap::new(),
            }));
        }
        out.extend(line_bytes(&Line {
            guard: guard_hex(entry.guard),
            fingerprint: None,
            key: Some(entry.key),
            choice: Some(entry.choice),
            timings: entry.timings,
        }));
        file.write_all(&out).map_err(|e| self.write_error(e))?;
        warnings.extend(self.refresh_from(&mut file)?);
        if self.lines > 2 * (self.entries.len() + self.guards.len()) + 256 {
            self.compact()?;
        }
        Ok(warnings)
    }

    /// Opens the file for appending (creating it) and locks it exclusively; retries when the
    /// path was renamed over (a compaction) while this process waited.
    fn lock(&self) -> Result<File, CacheError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| self.write_error(e))?;
        }
        loop {
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(&self.path)
                .map_err(|e| self.write_error(e))?;
            file.lock().map_err(|e| self.write_error(e))?;
            let held = file.metadata().map_err(|e| self.write_error(e))?;
            match std::fs::metadata(&self.path) {
                Ok(now) if file_id(&now) == file_id(&held) => return Ok(file),
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(self.write_error(e)),
            }
        }
    }

    /// Takes the lock, reads what others appended, and compacts.
    pub fn compact_locked(&mut self) -> Result<Vec<String>, CacheError> {
        let mut file = self.lock()?;
        let warnings = self.refresh_from(&mut file)?;
        self.compact()?;
        Ok(warnings)
    }

    /// Rewrites the journal from the merged state (one line per guard in use and per pick,
    /// sorted) through a temp file renamed over it. The caller holds the lock.
    fn compact(&mut self) -> Result<(), CacheError> {
        let bytes = self.serialize();
        ah_core::fs::write_atomic(&self.path, &bytes).map_err(|e| self.write_error(e.source))?;
        let meta = std::fs::metadata(&self.path).map_err(|e| self.read_error(e))?;
        self.legacy = false;
        self.file = Some(file_id(&meta));
        self.offset = bytes.len() as u64;
        self.header = header_line();
        self.lines = bytes.iter().filter(|&&b| b == b'\n').count();
        Ok(())
    }

    fn serialize(&mut self) -> Vec<u8> {
        let mut out = header_line();
        let mut ids: Vec<&KeyId> = self.entries.keys().collect();
        ids.sort();
        let mut used: Vec<GuardId> = self.entries.values().map(|e| e.guard).collect();
        used.sort();
        used.dedup();
        for g in &used {
            out.extend(line_bytes(&Line {
                guard: guard_hex(*g),
                fingerprint: Some(self.guards[g].clone()),
                key: None,
                choice: None,
                timings: BTreeMap::new(),
            }));
        }
        for id in ids {
            let e = &self.entries[id];
            out.extend(line_bytes(&Line {
                guard: guard_hex(e.guard),
                fingerprint: None,
                key: Some(e.key.clone()),
                choice: Some(e.choice.clone()),
                timings: e.timings.clone(),
            }));
        }
        self.guards.retain(|g, _| used.binary_search(g).is_ok());
        out
    }
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// The path a store is registered under: absolute, so that `picks.json` and `./picks.json`
/// share one store.
pub(super) fn store_path(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
