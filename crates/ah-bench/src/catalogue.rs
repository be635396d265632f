//! The real-model catalogue: model architectures whose `nn.Linear` layers the pad_mm runner's
//! real-model sampler draws GEMMs from (`ah-collect --shapes real|mix`).
//!
//! The catalogue is a TOML file of `[[model]]` tables (`crates/ah-bench/catalogue/models.toml`
//! is embedded in the binary; its header comment documents the fields). Each table is read with
//! unknown fields refused, then checked (positive dims, unique names, known kinds), and turned
//! into the model's linear layers ([`Model::layers`]). Errors name the file, the model and the
//! field.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The catalogue committed with the crate (`catalogue/models.toml`).
pub const BUILTIN_TEXT: &str = include_str!("../catalogue/models.toml");

/// How the label of the embedded catalogue reads in messages.
pub const BUILTIN_LABEL: &str = "the built-in catalogue (crates/ah-bench/catalogue/models.toml)";

/// Largest dimension a catalogue may give (2^24): keeps every derived product far from overflow.
pub const MAX_DIM: usize = 1 << 24;

/// A catalogue that could not be read or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, or no `[[model]]` array.
    #[error("{file}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// One model's table is wrong (missing, unknown or invalid field).
    #[error("{file}: model {model}: {message}")]
    Model {
        /// The file.
        file: String,
        /// `#index` and the name when the table has one.
        model: String,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// Attention projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Qkv {
    /// One `hidden -> (heads + 2 kv_heads) * head_dim` projection.
    Fused,
    /// Three projections: q `hidden -> heads * head_dim`, k and v `hidden -> kv_heads * head_dim`.
    Separate,
}

/// MLP block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mlp {
    /// Up `hidden -> intermediate`, activation, down `intermediate -> hidden`.
    Plain,
    /// Gate and up `hidden -> intermediate` each, then down (SwiGLU / GeGLU).
    Gated,
}

/// Model family (for reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Decoder-only language model.
    Decoder,
    /// Encoder-only model.
    Encoder,
    /// Encoder-decoder model.
    EncoderDecoder,
    /// Vision transformer.
    Vision,
}

/// One `[[model]]` table, as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Short name, unique in the catalogue.
    pub name: String,
    /// The config the values come from.
    pub source: String,
    /// Model width.
    pub hidden: usize,
    /// MLP width.
    pub intermediate: usize,
    /// Vocabulary head output (0: none).
    pub vocab: usize,
    /// Attention heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// Size of one head.
    pub head_dim: usize,
    /// Attention projection kind.
    pub qkv: Qkv,
    /// MLP kind.
    pub mlp: Mlp,
    /// Classifier output (0: none).
    pub classes: usize,
    /// Typical sequence lengths.
    pub seq: Vec<usize>,
    /// Family.
    pub family: Family,
}

/// One `nn.Linear(in_features, out_features)` of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linear {
    /// Layer name (`qkv`, `q`, `o`, `up`, `lm_head`, ...).
    pub name: &'static str,
    /// Input features (K of the forward GEMM).
    pub in_features: usize,
    /// Output features (N of the forward GEMM).
    pub out_features: usize,
    /// The LM head or classifier (drawn more often: padding matters most there).
    pub head: bool,
}

/// A validated model and its linear layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// The table as written.
    pub spec: ModelSpec,
    /// Its linear layers, body first, then the heads.
    pub layers: Vec<Linear>,
}

impl Model {
    /// The body layers (attention and MLP).
    pub fn body(&self) -> impl Iterator<Item = &Linear> {
        self.layers.iter().filter(|l| !l.head)
    }
    /// The LM head and classifier (possibly none).
    pub fn heads(&self) -> impl Iterator<Item = &Linear> {
        self.layers.iter().filter(|l| l.head)
    }
}

/// A validated catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalogue {
    /// Where it came from (a path or [`BUILTIN_LABEL`]).
    pub label: String,
    /// sha256 of the file's bytes, lowercase hex (recorded in the provenance sidecar).
    pub sha256: String,
    /// The models, in file order (at least one).
    pub models: Vec<Model>,
}

impl Catalogue {
    /// The embedded catalogue.
    pub fn builtin() -> Result<Catalogue, CatalogueError> {
        Self::parse(BUILTIN_TEXT, BUILTIN_LABEL)
    }

    /// Reads and validates a catalogue file.
    pub fn from_file(path: &Path) -> Result<Catalogue, CatalogueError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CatalogueError::Io {
            file: file.clone(),
            source,
        })?;
        Self::parse(&text, &file)
    }

    /// Parses and validates catalogue text; `label` names it in errors.
    pub fn parse(text: &str, label: &str) -> Result<Catalogue, CatalogueError> {
        let syntax = |message: String| CatalogueError::Syntax {
            file: label.to_string(),
            message,
        };
        let mut root: toml::Table = toml::from_str(text).map_err(|e| syntax(e.to_string()))?;
        if let Some(other) = root.keys().find(|k| *k != "model") {
            return Err(syntax(format!(
                "unknown top-level key `{other}`; a catalogue holds only [[model]] tables"
            )));
        }
        let Some(toml::Value::Array(tables)) = root.remove("model") else {
            return Err(syntax(
                "no [[model]] tables (`model` must be an array of tables)".into(),
            ));
        };
        if tables.is_empty() {
            return Err(syntax("no [[model]] tables".into()));
        }
        let mut names = HashSet::new();
        let mut models = Vec::with_capacity(tables.len());
        for (i, table) in tables.into_iter().enumerate() {
            let model_err = |model: String, message: String| CatalogueError::Model {
                file: label.to_string(),
                model,
                message,
            };
            let id = model_id(i, &table);
            let spec =
                ModelSpec::deserialize(table).map_err(|e| model_err(id.clone(), e.to_string()))?;
            check_spec(&spec).map_err(|m| model_err(id.clone(), m))?;
            if !names.insert(spec.name.clone()) {
                return Err(model_err(
                    id,
                    "`name`: a model of this name comes earlier".into(),
                ));
            }
            let layers = derive_layers(&spec);
            models.push(Model { spec, layers });
        }
        Ok(Catalogue {
            label: label.to_string(),
            sha256: format!("{:x}", Sha256::digest(text.as_bytes())),
            models,
        })
    }
}

/// `#3 (`llama-2-7b`)` when the table has a string name, else `#3`.
fn model_id(index: usize, table: &toml::Value) -> String {
    match table.get("name").and_then(toml::Value::as_str) {
        Some(n) => format!("#{} (`{n}`)", index + 1),
        None => format!("#{}", index + 1),
    }
}

/// The field checks serde cannot do; the message names the field.
fn check_spec(s: &ModelSpec) -> Result<(), String> {
    if s.name.trim().is_empty() {
        return Err("`name` is empty".into());
    }
    for (field, v) in [
        ("hidden", s.hidden),
        ("intermediate", s.intermediate),
        ("heads", s.heads),
        ("kv_heads", s.kv_heads),
        ("head_dim", s.head_dim),
    ] {
        if v == 0 {
            return Err(format!("`{field}` is 0; it must be positive"));
        }
    }
    for (field, v) in [
        ("hidden", s.hidden),
        ("intermediate", s.intermediate),
        ("vocab", s.vocab),
        ("classes", s.classes),
        ("heads", s.heads),
        ("head_dim", s.head_dim),
    ] {
        if v > MAX_DIM {
            return Err(format!("`{field}` = {v} is larger than {MAX_DIM}"));
        }
    }
    if s.kv_heads > s.heads {
        return Err(format!(
            "`kv_heads` = {} is more than `heads` = {}",
            s.kv_heads, s.heads
        ));
    }
    if s.seq.is_empty() {
        return Err("`seq` is empty; give the model's typical sequence lengths".into());
    }
    if let Some(bad) = s.seq.iter().find(|&&l| l == 0 || l > MAX_DIM) {
        return Err(format!(
            "`seq` holds {bad}; lengths must be in 1..={MAX_DIM}"
        ));
    }
    Ok(())
}

/// The model's `nn.Linear` layers (in -> out), as the catalogue's header describes them.
pub fn derive_layers(s: &ModelSpec) -> Vec<Linear> {
    let body = |name, in_features, out_features| Linear {
        name,
        in_features,
        out_features,
        head: false,
    };
    let q = s.heads * s.head_dim;
    let kv = s.kv_heads * s.head_dim;
    let mut v = match s.qkv {
        Qkv::Fused => vec![body("qkv", s.hidden, q + 2 * kv)],
        Qkv::Separate => vec![
            body("q", s.hidden, q),
            body("k", s.hidden, kv),
            body("v", s.hidden, kv),
        ],
    };
    v.push(body("o", q, s.hidden));
    if s.mlp == Mlp::Gated {
        v.push(body("gate", s.hidden, s.intermediate));
    }
    v.push(body("up", s.hidden, s.intermediate));
    v.push(body("down", s.intermediate, s.hidden));
    for (name, out, cond) in [
        ("lm_head", s.vocab, s.vocab > 0),
        ("classifier", s.classes, s.classes > 0),
    ] {
        if cond {
            v.push(Linear {
                name,
                in_features: s.hidden,
                out_features: out,
                head: true,
            });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[model]]
name = "m"
source = "x"
hidden = 4096
intermediate = 14336
vocab = 128256
heads = 32
kv_heads = 8
head_dim = 128
qkv = "separate"
mlp = "gated"
classes = 0
seq = [512, 8192]
family = "decoder"
"#;

    fn err(text: &str) -> String {
        Catalogue::parse(text, "cat.toml").unwrap_err().to_string()
    }

    #[test]
    fn builtin_parses_and_every_layer_has_positive_dims() {
        let c = Catalogue::builtin().unwrap();
        assert!(c.models.len() >= 20, "{}", c.models.len());
        assert_eq!(c.sha256.len(), 64);
        for m in &c.models {
            assert!(m.body().count() >= 4, "{}", m.spec.name);
            for l in &m.layers {
                assert!(
                    l.in_features > 0 && l.out_features > 0,
                    "{} {l:?}",
                    m.spec.name
                );
            }
        }
        let gpt2 = c.models.iter().find(|m| m.spec.name == "gpt2").unwrap();
        let dims: Vec<_> = gpt2
            .layers
            .iter()
            .map(|l| (l.name, l.in_features, l.out_features))
            .collect();
        assert_eq!(
            dims,
            [
                ("qkv", 768, 2304),
                ("o", 768, 768),
                ("up", 768, 3072),
                ("down", 3072, 768),
                ("lm_head", 768, 50257)
            ]
        );
    }

    #[test]
    fn separate_gated_gqa_layers() {
        let c = Catalogue::parse(GOOD, "cat.toml").unwrap();
        let dims: Vec<_> = c.models[0]
            .layers
            .iter()
            .map(|l| (l.name, l.in_features, l.out_features, l.head))
            .collect();
        assert_eq!(
            dims,
            [
                ("q", 4096, 4096, false),
                ("k", 4096, 1024, false),
                ("v", 4096, 1024, false),
                ("o", 4096, 4096, false),
                ("gate", 4096, 14336, false),
                ("up", 4096, 14336, false),
                ("down", 14336, 4096, false),
                ("lm_head", 4096, 128256, true)
            ]
        );
        let vit = GOOD
            .replace("vocab = 128256", "vocab = 0")
            .replace("classes = 0", "classes = 1000")
            .replace("\"separate\"", "\"fused\"");
        let c = Catalogue::parse(&vit, "cat.toml").unwrap();
        assert_eq!(c.models[0].layers[0].out_features, 4096 + 2 * 1024);
        let heads: Vec<_> = c.models[0]
            .heads()
            .map(|l| (l.name, l.out_features))
            .collect();
        assert_eq!(heads, [("classifier", 1000)]);
    }

    #[test]
    fn hostile_catalogues_give_errors_naming_file_model_and_field() {
        let e = err(&GOOD.replace("\"separate\"", "\"grouped\""));
        assert!(
            e.contains("cat.toml") && e.contains("`m`") && e.contains("grouped"),
            "{e}"
        );
        let e = err(&GOOD.replace("mlp = \"gated\"", "mlp = \"swiglu\""));
        assert!(e.contains("swiglu") && e.contains("`m`"), "{e}");
        let e = err(&GOOD.replace("hidden = 4096", "hidden = 0"));
        assert!(e.contains("`hidden` is 0") && e.contains("#1 (`m`)"), "{e}");
        let e = err(&GOOD.replace("head_dim = 128\n", ""));
        assert!(
            e.contains("missing field `head_dim`") && e.contains("`m`"),
            "{e}"
        );
        let e = err(&GOOD.replace("family", "flavour = 1\nfamily"));
        assert!(e.contains("unknown field `flavour`"), "{e}");
        let e = err(&format!("{GOOD}{GOOD}"));
        assert!(e.contains("#2 (`m`)") && e.contains("`name`"), "{e}");
        let e = err(&GOOD.replace("seq = [512, 8192]", "seq = []"));
        assert!(e.contains("`seq` is empty"), "{e}");
        let e = err(&GOOD.replace("kv_heads = 8", "kv_heads = 64"));
        assert!(e.contains("`kv_heads`"), "{e}");
        let e = err(&GOOD.replace("hidden = 4096", "hidden = -1"));
        assert!(e.contains("`m`") && e.contains("cat.toml"), "{e}");
        let e = err(&GOOD.replace("vocab = 128256", "vocab = 99999999999"));
        assert!(e.contains("`vocab`"), "{e}");
        let e = err(&GOOD.replace("[[model]]", "[model]"));
        assert!(e.contains("array of tables"), "{e}");
        assert!(err("").contains("no [[model]]"));
        assert!(err("model = []").contains("no [[model]]"));
        assert!(err("[[model]\n").contains("cat.toml"));
        assert!(err(&format!("other = 1\n{GOOD}")).contains("`other`"));
        let e = Catalogue::from_file(Path::new("/nonexistent/cat.toml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/cat.toml"), "{e}");
    }
}
