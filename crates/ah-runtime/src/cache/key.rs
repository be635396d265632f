//! What a cached pick is keyed by ([`CacheKey`]: the optimization, the input, the choices) and
//! guarded by ([`DeviceFingerprint`]: device, driver, library and heuristic versions).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use ah_core::context::Context;
use ah_core::metadata::DeviceIdentity;

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
            heuristic_version: ah_core::TOOL_VERSION.to_string(),
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
