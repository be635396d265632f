//! Log metadata (PyTorch's `AHMetadata`) and the device identity heuristics are matched on.

use serde::{Deserialize, Serialize};

/// The GPU identity that PyTorch matches heuristics on: the maximum opt-in shared memory per
/// block of device 0 and the compute capability. A100 is `(166912, (8, 0))`, H100 and H200
/// `(232448, (9, 0))`; no CUDA device is `(0, (0, 0))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// Max opt-in shared memory per block, bytes.
    pub shared_memory: u64,
    /// Compute capability (major, minor).
    pub device_capa: (u32, u32),
}

impl DeviceIdentity {
    /// A100 (`166912`, `(8, 0)`).
    pub const A100: DeviceIdentity = DeviceIdentity {
        shared_memory: 166_912,
        device_capa: (8, 0),
    };
    /// H100 and H200 (`232448`, `(9, 0)`).
    pub const H100: DeviceIdentity = DeviceIdentity {
        shared_memory: 232_448,
        device_capa: (9, 0),
    };
    /// No CUDA device: PyTorch's `(0, 0)` identity.
    pub const NONE: DeviceIdentity = DeviceIdentity {
        shared_memory: 0,
        device_capa: (0, 0),
    };

    /// Python's `str(tuple)` of the capability, as the generated precondition compares it:
    /// `"(9, 0)"`.
    pub fn capa_repr(&self) -> String {
        format!("({}, {})", self.device_capa.0, self.device_capa.1)
    }
}

/// Metadata of one optimization's log: device identity, name and feature lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// Max opt-in shared memory per block of device 0.
    pub shared_memory: u64,
    /// Compute capability.
    pub device_capa: (u32, u32),
    /// Optimization name (`pad_mm`, `mm`, `mixed_mm`, ...).
    pub name: String,
    /// Numerical feature names, in context order.
    pub numerical_features: Vec<String>,
    /// Categorical feature names, in context order.
    pub categorical_features: Vec<String>,
    /// The older (June 2024) serializer also stored the choices; `None` for current logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
}

impl Metadata {
    /// Metadata for a device and a context's feature kinds.
    pub fn new(
        device: DeviceIdentity,
        name: impl Into<String>,
        numerical_features: Vec<String>,
        categorical_features: Vec<String>,
    ) -> Self {
        Self {
            shared_memory: device.shared_memory,
            device_capa: device.device_capa,
            name: name.into(),
            numerical_features,
            categorical_features,
            choices: None,
        }
    }

    /// The device identity part.
    pub fn device(&self) -> DeviceIdentity {
        DeviceIdentity {
            shared_memory: self.shared_memory,
            device_capa: self.device_capa,
        }
    }

    /// The metadata line exactly as PyTorch's current writer emits it:
    /// `json.dumps({"shared_memory", "device_capa", "name", "numerical_features",
    /// "categorical_features"})` with `", "` and `": "` separators, no trailing newline.
    pub fn to_json_line(&self) -> String {
        let list = |v: &[String]| {
            let items: Vec<String> = v.iter().map(|s| json_string(s)).collect();
            format!("[{}]", items.join(", "))
        };
        format!(
            "{{\"shared_memory\": {}, \"device_capa\": [{}, {}], \"name\": {}, \"numerical_features\": {}, \"categorical_features\": {}}}",
            self.shared_memory,
            self.device_capa.0,
            self.device_capa.1,
            json_string(&self.name),
            list(&self.numerical_features),
            list(&self.categorical_features),
        )
    }

    /// All logged features: numerical then categorical (PyTorch's training order).
    pub fn features(&self) -> impl Iterator<Item = &str> {
        self.numerical_features
            .iter()
            .chain(&self.categorical_features)
            .map(String::as_str)
    }

    /// True when `name` is one of the categorical features.
    pub fn is_categorical(&self, name: &str) -> bool {
        self.categorical_features.iter().any(|c| c == name)
    }

    /// The context of one log row: the log's header `features` with the row's `values`, in
    /// order, each categorical as this metadata says.
    pub fn row_context(&self, features: &[String], values: &[crate::Value]) -> crate::Context {
        let mut ctx = crate::Context::with_capacity(features.len());
        for (name, v) in features.iter().zip(values) {
            ctx.add_feature(name.clone(), v.clone(), self.is_categorical(name));
        }
        ctx
    }
}

/// `json.dumps` of a string with the default `ensure_ascii=True`.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
