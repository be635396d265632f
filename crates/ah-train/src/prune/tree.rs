//! The policy tree: splits on a GEMM's features, a [`Policy`] at each leaf (grown by
//! [`super::grow::Growth`]).
//!
//! Tests are `feature <= threshold` on numeric quantities (logged numeric features, products
//! of two dimensions, the power-of-two alignment of a dimension, the byte alignment of the
//! leading dimensions) and `feature == value` on categorical ones. Thresholds are midpoints
//! between consecutive distinct training values.

use serde::{Deserialize, Serialize};

use ah_core::Value;

use super::data::Sample;
use super::policy::Policy;

/// A numeric quantity of a GEMM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Quantity {
    /// A logged numeric feature.
    Feature {
        /// Its name.
        name: String,
    },
    /// The product of two logged numeric features.
    Product {
        /// The first.
        a: String,
        /// The second.
        b: String,
    },
    /// The largest power of two (at most 128) that divides a logged numeric feature.
    Align {
        /// Its name.
        name: String,
    },
    /// The smallest alignment in bytes (at most 128) of the leading dimensions of the two
    /// operands and the output ([`lead_align`], which `ah_codegen::prune_tree` owns with the
    /// generated code's rendering of it). cuBLAS runs its fast kernels only when every
    /// leading dimension is 16-byte aligned: on the H100, Triton beat cuBLAS by more than 25 %
    /// on 150 of the 281 GEMMs collected by 2026-11-24 below that, and on 33 of the 827 at or
    /// above it. `m`, `k` and `n` say it only through the layout, which a tree of depth 5
    /// spends most of its splits on.
    #[serde(rename = "lead_align")]
    LeadAlign,
    /// How long the contraction is against the output's larger side: `k` over the larger of
    /// `m` and `n` ([`k_ratio`]). A batched product into a small output over a long axis
    /// (linear attention's state, a Gram matrix, a weight gradient over many tokens) is where
    /// fp32 cuBLAS without TF32 loses most: on the logs of 2026-11-26, cuBLAS was more than
    /// 10 % behind max-autotune's pick on 20 of the 39 fp32 bmm with a ratio of 8 or more, and
    /// on 2 of the 15 fp32 mm. A tree reading `m`, `k` and `n` apart needs several splits
    /// to say it.
    #[serde(rename = "k_ratio")]
    KRatio,
    /// The GEMM's narrowest side, the smallest of `m`, `k` and `n` ([`min_side`]): what tells an
    /// MoE router, a LoRA adapter or a small head (a side of 4-64 over thousands of tokens) from
    /// an ordinary linear (a narrow side of 256 or more). With the adapters log in training, a
    /// tree reading `m`, `k` and `n` apart put the older held-out sets' linears into one
    /// 581-GEMM full-list leaf (docs/results.md, twenty-ninth session).
    #[serde(rename = "min_side")]
    MinSide,
    /// The GEMM's multiply-adds, `batch * m * k * n`: its size, which no split searches (a
    /// tree has `m`, `k` and the products of two), read by a [`super::guard::SearchGuard`].
    Work,
}

pub use ah_codegen::prune_tree::{
    align, dtype_bytes, k_ratio, lead_align, min_side, ALIGN_CAP, LEAD_ALIGN_FEATURES,
};

impl Quantity {
    /// The quantities the tree may split on, given the logged `features`, which of them are
    /// `numeric`, and whether [`Quantity::KRatio`] (`ah-prune --k-ratio`) and
    /// [`Quantity::MinSide`] (`--min-side`) are among them.
    pub fn all(
        features: &[String],
        numeric: &[String],
        k_ratio: bool,
        min_side: bool,
    ) -> Vec<Quantity> {
        let has_mkn = ["m", "k", "n"]
            .iter()
            .all(|d| numeric.iter().any(|f| f == d));
        let mut q: Vec<Quantity> = numeric
            .iter()
            .map(|n| Quantity::Feature { name: n.clone() })
            .collect();
        for (a, b) in [("m", "k"), ("m", "n"), ("k", "n"), ("batch", "m")] {
            if numeric.iter().any(|f| f == a) && numeric.iter().any(|f| f == b) {
                q.push(Quantity::Product {
                    a: a.into(),
                    b: b.into(),
                });
            }
        }
        for d in ["m", "k", "n"] {
            if numeric.iter().any(|f| f == d) {
                q.push(Quantity::Align { name: d.into() });
            }
        }
        if LEAD_ALIGN_FEATURES
            .iter()
            .all(|f| features.iter().any(|g| g == f))
        {
            q.push(Quantity::LeadAlign);
        }
        if k_ratio && has_mkn {
            q.push(Quantity::KRatio);
        }
        if min_side && has_mkn {
            q.push(Quantity::MinSide);
        }
        q
    }

    /// Its value on `s` (`None` when a feature is missing or not a number).
    pub fn eval(&self, s: &Sample, features: &[String]) -> Option<f64> {
        let value = |n: &str| features.iter().position(|f| f == n).map(|i| &s.values[i]);
        let get = |n: &str| value(n).and_then(Value::as_f64);
        let int = |n: &str| get(n).map(|x| x as i64);
        match self {
            Quantity::Feature { name } => get(name),
            Quantity::Product { a, b } => Some(get(a)? * get(b)?),
            Quantity::Align { name } => Some(align(int(name)?) as f64),
            Quantity::LeadAlign => {
                let Value::Str(dtype) = value("mat1_dtype")? else {
                    return None;
                };
                let mat1 = [int("mat1_stride_0")?, int("mat1_stride_1")?];
                let mat2 = [int("mat2_stride_0")?, int("mat2_stride_1")?];
                Some(lead_align(mat1, mat2, int("n")?, dtype_bytes(dtype)) as f64)
            }
            Quantity::KRatio => Some(k_ratio(int("m")?, int("k")?, int("n")?)),
            Quantity::MinSide => Some(min_side(int("m")?, int("k")?, int("n")?)),
            Quantity::Work => Some(get("batch")? * get("m")? * get("k")? * get("n")?),
        }
    }
}

/// A test of a split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Test {
    /// `quantity <= threshold`.
    Le {
        /// What is compared.
        quantity: Quantity,
        /// The threshold.
        threshold: f64,
    },
    /// `feature == value` (a categorical feature).
    Eq {
        /// The feature.
        feature: String,
        /// The value, as logged.
        value: Value,
    },
}

impl Test {
    /// GEMMs with a leading dimension below 16-byte alignment ([`Quantity::LeadAlign`] <= 12,
    /// between 8 and 16): the ones cuBLAS cannot run on its fast path, where Triton's templates
    /// win most often. As the root's split (`ah-prune --alignment-first`) it lets each side
    /// learn its own rule: a greedy root split on size left GEMMs of 4- and 8-byte alignment in
    /// a cuBLAS-only leaf of aligned ones.
    pub fn cublas_aligned() -> Test {
        Test::Le {
            quantity: Quantity::LeadAlign,
            threshold: 12.0,
        }
    }

    /// Whether `s` passes (`None`: a value is missing).
    pub fn eval(&self, s: &Sample, features: &[String]) -> Option<bool> {
        match self {
            Test::Le {
                quantity,
                threshold,
            } => Some(quantity.eval(s, features)? <= *threshold),
            Test::Eq { feature, value } => {
                let i = features.iter().position(|f| f == feature)?;
                Some(&s.values[i] == value)
            }
        }
    }
}

/// A node of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "lowercase")]
pub enum Node {
    /// A decision.
    Leaf {
        /// What to keep.
        policy: Policy,
        /// Training GEMMs that reached it.
        samples: usize,
    },
    /// A split: `yes` when the test passes.
    Split {
        /// The test.
        test: Test,
        /// Where a passing GEMM goes.
        yes: Box<Node>,
        /// Where the others go.
        no: Box<Node>,
    },
}

impl Node {
    /// The policy for `s` (`Default` when a value the tree needs is missing).
    pub fn decide(&self, s: &Sample, features: &[String]) -> &Policy {
        match self {
            Node::Leaf { policy, .. } => policy,
            Node::Split { test, yes, no } => match test.eval(s, features) {
                Some(true) => yes.decide(s, features),
                Some(false) => no.decide(s, features),
                None => &Policy::Default,
            },
        }
    }

    /// Number of leaves.
    pub fn leaves(&self) -> usize {
        match self {
            Node::Leaf { .. } => 1,
            Node::Split { yes, no, .. } => yes.leaves() + no.leaves(),
        }
    }
}
