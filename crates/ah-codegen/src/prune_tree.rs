//! The tree of a pruning model (`ah-prune`'s model JSON, `"tree"`), read and checked once for
//! both of its renderers: the Python handler module ([`crate::inductor`]) and the Rust module
//! ([`crate::inductor_rust`]).

use serde_json::Value as Json;

/// Deepest tree read (Python refuses 100 levels of indentation).
pub const MAX_DEPTH: usize = 64;

/// A numeric quantity of a GEMM, over logged feature names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity<'a> {
    /// A feature.
    Feature(&'a str),
    /// The product of two features.
    Product(&'a str, &'a str),
    /// The largest power of two, at most 128, that divides a feature ([`align`]).
    Align(&'a str),
    /// The smallest alignment in bytes of the leading dimensions of the operands and the
    /// output ([`lead_align`]).
    LeadAlign,
    /// `k` over the larger of `m` and `n` ([`k_ratio`]).
    KRatio,
    /// The GEMM's narrowest side, the smallest of `m`, `k` and `n` ([`min_side`]).
    MinSide,
    /// The multiply-adds of the GEMM, `batch * m * k * n`, as a float (exact below 2^53, far
    /// above any threshold a guard sets, so the generated Python's integer product and the
    /// Rust module's float product agree with the trainer).
    Work,
}

/// The cap of [`align`] and [`lead_align`].
pub const ALIGN_CAP: i64 = 128;

/// The logged features [`lead_align`] reads: the operands' strides, the output's leading
/// dimension `n`, and the first operand's element type.
pub const LEAD_ALIGN_FEATURES: [&str; 6] = [
    "mat1_stride_0",
    "mat1_stride_1",
    "mat2_stride_0",
    "mat2_stride_1",
    "n",
    "mat1_dtype",
];

/// Bytes of an element of each dtype [`dtype_bytes`] knows, as PyTorch's log spells it; the
/// generated Rust carries this table, the Python `naming.py`'s `DTYPE_BYTES` (a test checks
/// the two agree).
pub const DTYPE_BYTES: [(&str, i64); 6] = [
    ("torch.float64", 8),
    ("torch.int64", 8),
    ("torch.float32", 4),
    ("torch.int32", 4),
    ("torch.float16", 2),
    ("torch.bfloat16", 2),
];

/// The largest power of two, at most [`ALIGN_CAP`], that divides `x` (0 for `x <= 0`).
pub fn align(x: i64) -> i64 {
    if x <= 0 {
        0
    } else {
        (x & -x).min(ALIGN_CAP)
    }
}

/// Bytes of an element of a logged dtype ([`DTYPE_BYTES`]); 1 for a dtype not listed, which
/// reads its GEMM as the least aligned.
pub fn dtype_bytes(dtype: &str) -> i64 {
    DTYPE_BYTES
        .iter()
        .find(|(d, _)| *d == dtype)
        .map_or(1, |&(_, b)| b)
}

/// The smallest alignment in bytes, at most [`ALIGN_CAP`], of the leading dimensions of a
/// GEMM's operands and output: a matrix's leading dimension is the larger of its two strides
/// (`mat1`, `mat2`), the output's is `n`, and each counts as [`align`] of it times `bytes`, an
/// element's size. cuBLAS runs its fast kernels only when all three are 16-byte aligned.
pub fn lead_align(mat1: [i64; 2], mat2: [i64; 2], n: i64, bytes: i64) -> i64 {
    [mat1[0].max(mat1[1]), mat2[0].max(mat2[1]), n]
        .into_iter()
        .map(|ld| align(ld).saturating_mul(bytes).min(ALIGN_CAP))
        .min()
        .unwrap_or(0)
}

/// How long the contraction is against the output's larger side: `k` over the larger of `m`
/// and `n` (and over 1 where both are 0), as a float. The generated Python and Rust divide
/// the same two integers (exact as doubles below 2^53), so they agree with the trainer at
/// every threshold.
pub fn k_ratio(m: i64, k: i64, n: i64) -> f64 {
    k as f64 / m.max(n).max(1) as f64
}

/// The narrowest side of a GEMM: the smallest of `m`, `k` and `n`, as a float (exact below
/// 2^53, so the generated Python's and Rust's integer minimum agree with the trainer).
pub fn min_side(m: i64, k: i64, n: i64) -> f64 {
    m.min(k).min(n) as f64
}

/// A split's test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test<'a> {
    /// `quantity <= threshold` (a finite threshold).
    Le(Quantity<'a>, f64),
    /// `feature == value`, the value as the model holds it (a bool, number or string).
    Eq(&'a str, &'a Json),
}

/// A leaf's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Policy<'a> {
    /// One cuBLAS choice only.
    Extern,
    /// One cuBLAS choice and these template choices.
    Keep(Vec<&'a str>),
    /// Inductor's full list.
    Default,
    /// Inductor's full list without these template choices (matched by the names Inductor
    /// offers the GEMM, not sized).
    Drop(Vec<&'a str>),
}

/// A node.
#[derive(Debug, Clone)]
pub enum Node<'a> {
    /// A decision, and how many training GEMMs reached it (where the model says: the generated
    /// Python shows it beside the decision, so a reader sees what a leaf rests on).
    Leaf(Policy<'a>, Option<u64>),
    /// A test, the subtree where it holds, the subtree where it does not.
    Split(Test<'a>, Box<Node<'a>>, Box<Node<'a>>),
}

/// Nodes are equal when they decide alike: a leaf's count of training GEMMs is not part of its
/// decision (the Rust module merges branches that decide alike).
impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Node::Leaf(a, _), Node::Leaf(b, _)) => a == b,
            (Node::Split(t, yes, no), Node::Split(u, yes2, no2)) => {
                t == u && yes == yes2 && no == no2
            }
            _ => false,
        }
    }
}

/// Reads the tree `n`; an error says what is wrong with it.
pub fn read(n: &Json) -> Result<Node<'_>, String> {
    node(n, 1)
}

fn node(n: &Json, depth: usize) -> Result<Node<'_>, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the tree is deeper than {MAX_DEPTH} levels, more than generated Python can nest"
        ));
    }
    match n["node"].as_str() {
        Some("leaf") => Ok(Node::Leaf(policy(&n["policy"])?, n["samples"].as_u64())),
        Some("split") => Ok(Node::Split(
            test(&n["test"])?,
            Box::new(node(&n["yes"], depth + 1)?),
            Box::new(node(&n["no"], depth + 1)?),
        )),
        _ => Err(format!("unknown node {}", clip(n))),
    }
}

fn name<'a>(q: &'a Json, key: &str) -> Result<&'a str, String> {
    q[key]
        .as_str()
        .ok_or_else(|| format!("a test without its feature name ({key})"))
}

fn quantity(q: &Json) -> Result<Quantity<'_>, String> {
    Ok(match q["kind"].as_str() {
        Some("feature") => Quantity::Feature(name(q, "name")?),
        Some("product") => Quantity::Product(name(q, "a")?, name(q, "b")?),
        Some("align") => Quantity::Align(name(q, "name")?),
        Some("lead_align") => Quantity::LeadAlign,
        Some("k_ratio") => Quantity::KRatio,
        Some("min_side") => Quantity::MinSide,
        Some("work") => Quantity::Work,
        _ => return Err(format!("unknown quantity {}", clip(q))),
    })
}

fn test(t: &Json) -> Result<Test<'_>, String> {
    match t["kind"].as_str() {
        Some("le") => {
            let thr = t["threshold"]
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or("a threshold that is not a finite number")?;
            Ok(Test::Le(quantity(&t["quantity"])?, thr))
        }
        Some("eq") => {
            let value = &t["value"];
            let ok = value.is_boolean()
                || value.is_string()
                || value.as_f64().is_some_and(f64::is_finite);
            if !ok {
                return Err(format!(
                    "a categorical value that is not a bool, number or string: {}",
                    clip(value)
                ));
            }
            Ok(Test::Eq(name(t, "feature")?, value))
        }
        _ => Err(format!("unknown test {}", clip(t))),
    }
}

fn policy(p: &Json) -> Result<Policy<'_>, String> {
    match p["kind"].as_str() {
        Some("extern") => Ok(Policy::Extern),
        Some("default") => Ok(Policy::Default),
        Some("keep") => names(p, "keep").map(Policy::Keep),
        Some("drop") => names(p, "drop").map(Policy::Drop),
        _ => Err(format!("unknown policy {}", clip(p))),
    }
}

/// The choice names of a `kind` policy `p`.
fn names<'a>(p: &'a Json, kind: &str) -> Result<Vec<&'a str>, String> {
    p["choices"]
        .as_array()
        .ok_or_else(|| format!("a {kind} policy without choices"))?
        .iter()
        .map(|n| {
            n.as_str()
                .ok_or_else(|| "a choice that is not a string".into())
        })
        .collect()
}

/// A JSON value as an error message quotes it.
fn clip(v: &Json) -> String {
    ah_core::error::clip(&v.to_string()).into_owned()
}

/// The helper functions a rendering of a tree calls, each emitted only when a split uses it
/// (an unused private function is a warning in the user's Rust build and dead code in Python).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Helpers {
    /// [`align`]: for [`Quantity::Align`], and inside `lead_align`.
    pub align: bool,
    /// [`lead_align`] (over the rendering's [`DTYPE_BYTES`] table).
    pub lead_align: bool,
}

impl Helpers {
    /// The helpers `tree` calls.
    pub fn of(tree: &Node) -> Helpers {
        let lead_align = uses(tree, |q| matches!(q, Quantity::LeadAlign));
        let align = lead_align || uses(tree, |q| matches!(q, Quantity::Align(_)));
        Helpers { align, lead_align }
    }

    /// The helpers' source in a language: `align` and `lead_align` as that language writes
    /// them (each rendering defines the [`DTYPE_BYTES`] table `lead_align` reads).
    pub fn source(self, align: &str, lead_align: &str) -> String {
        let mut out = String::new();
        if self.align {
            out.push_str(align);
        }
        if self.lead_align {
            out.push_str(lead_align);
        }
        out
    }
}

/// Whether a split of `n` compares a quantity for which `q` holds.
fn uses(n: &Node, q: fn(&Quantity) -> bool) -> bool {
    match n {
        Node::Leaf(..) => false,
        Node::Split(t, yes, no) => {
            matches!(t, Test::Le(x, _) if q(x)) || uses(yes, q) || uses(no, q)
        }
    }
}

/// What a shared list of template names does at its leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// Kept beside cuBLAS ([`Policy::Keep`]).
    Kept,
    /// Dropped from the full list ([`Policy::Drop`]).
    Dropped,
}

impl ListKind {
    /// The kind and names of `p`'s list, if it has one.
    pub fn of<'p, 'a>(p: &'p Policy<'a>) -> Option<(ListKind, &'p [&'a str])> {
        match p {
            Policy::Keep(names) => Some((ListKind::Kept, names)),
            Policy::Drop(names) => Some((ListKind::Dropped, names)),
            Policy::Extern | Policy::Default => None,
        }
    }

    /// How a comment above the list's constant says what it does.
    pub fn doing(self) -> &'static str {
        match self {
            ListKind::Kept => "kept",
            ListKind::Dropped => "dropped from the full list",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            ListKind::Kept => "KEPT",
            ListKind::Dropped => "DROPPED",
        }
    }
}

/// The template lists kept (or dropped) at more than one leaf of a tree, each with its leaf
/// count, first occurrence first. Both renderings name each once (`KEPT_1`, ..., `DROPPED_1`,
/// ...) and refer to it from its leaves, as a hand-written module would: a guard's learned list
/// (`ah-prune --fp32-guard-list`) repeats at every guarded leaf, and the configs
/// `--fp32-drop-never-near` drops at every strict-fp32 full-list leaf.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedLists<'a>(Vec<(ListKind, Vec<&'a str>, usize)>);

impl<'a> SharedLists<'a> {
    /// The lists of `tree` kept or dropped at two leaves or more.
    pub fn of(tree: &Node<'a>) -> SharedLists<'a> {
        let mut all: Vec<(ListKind, Vec<&'a str>, usize)> = Vec::new();
        count_lists(tree, &mut all);
        all.retain(|(_, _, leaves)| *leaves > 1);
        SharedLists(all)
    }

    /// The constant naming the list of `p` (`KEPT_1` for the first shared kept list), if it
    /// is shared.
    pub fn name(&self, p: &Policy) -> Option<String> {
        let (kind, names) = ListKind::of(p)?;
        let i = self
            .0
            .iter()
            .position(|(k, list, _)| *k == kind && list == names)?;
        Some(self.constant_name(i))
    }

    /// Each shared list with its kind, its constant's name and its leaf count, in order.
    pub fn iter(&self) -> impl Iterator<Item = (ListKind, String, &[&'a str], usize)> + '_ {
        self.0.iter().enumerate().map(|(i, (kind, list, leaves))| {
            (*kind, self.constant_name(i), list.as_slice(), *leaves)
        })
    }

    /// The name of the `i`-th shared list: its kind's prefix and its rank among that kind's,
    /// from 1.
    fn constant_name(&self, i: usize) -> String {
        let kind = self.0[i].0;
        let rank = self.0[..i].iter().filter(|(k, _, _)| *k == kind).count();
        format!("{}_{}", kind.prefix(), rank + 1)
    }
}

fn count_lists<'a>(n: &Node<'a>, out: &mut Vec<(ListKind, Vec<&'a str>, usize)>) {
    match n {
        Node::Leaf(p, _) => {
            let Some((kind, names)) = ListKind::of(p) else {
                return;
            };
            match out.iter_mut().find(|(k, l, _)| *k == kind && l == names) {
                Some((_, _, leaves)) => *leaves += 1,
                None => out.push((kind, names.to_vec(), 1)),
            }
        }
        Node::Split(_, yes, no) => {
            count_lists(yes, out);
            count_lists(no, out);
        }
    }
}
