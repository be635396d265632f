//! `pad_mm` as PyTorch logs it, typed: the logged features ([`FEATURES`]), a context read into
//! them ([`PadMm::read`]) and PyTorch's 26 operations computed over them ([`PadMmOps`]),
//! allocation-free. Every generated `pad_mm` heuristic whose model has exactly these
//! operations calls this instead of carrying its own copy; its model-specific parts (range
//! guard, columns, tree) stay in the module.
//!
//! Semantics are the expression language's ([`crate::ops`], Python's): integers stay integers
//! and an overflow fails, `/` is float division and a division by zero fails; a failure makes
//! the heuristic unsure, naming the operation. The first operation that fails, in
//! [`OPERATIONS`] order, is the one named, as in [`crate::model::ModelEvaluator`]. A context
//! of other kinds (a float size, a missing feature) is not read ([`PadMm::read`] is `None`):
//! the module's generic path evaluates [`OPERATIONS`] on it instead, with the same results.

use super::{range_guard, read_by_name, FeatureRange, Operations, VerifiedSchema};
use crate::heuristic::UnsureKind;
use crate::ops::scalar::fdiv;
use crate::{Context, Value};

/// PyTorch's logged `pad_mm` features, in log order: the numerical ones, then the
/// categorical ones.
pub const FEATURES: [&str; 17] = [
    "m",
    "k",
    "n",
    "mat1_stride_0",
    "mat1_stride_1",
    "mat2_stride_0",
    "mat2_stride_1",
    "m_padded_length",
    "k_padded_length",
    "n_padded_length",
    "mat1_align_size",
    "mat2_align_size",
    "mat1_dtype",
    "mat2_dtype",
    "prepadded_mat1",
    "prepadded_mat2",
    "using_tf32",
];

/// PyTorch's `pad_mm` operations, (name, expression, categorical) in order: the same as
/// [`crate::ops::builtin_operations`]`("pad_mm")`.
pub const OPERATION_SPECS: [(&str, &str, bool); 26] = [
    ("m*k", "m * k", false),
    ("m*n", "m * n", false),
    ("k*n", "k * n", false),
    ("k/(m*n)", "k / (m * n)", false),
    (
        "bfloat_perf_hit",
        "k > m * 1024 and k > n * 1024 and str(mat1_dtype) == 'torch.bfloat16'",
        true,
    ),
    (
        "arith_intensity",
        "if(m == 0 or k == 0 or n == 0, 0.0, m * k * n / (m * k + k * n + m * n))",
        false,
    ),
    (
        "mat1_innermost_needs_padding",
        "(mat1_stride_0 == 1 and m_padded_length != 0) or (mat1_stride_1 == 1 and k_padded_length != 0)",
        true,
    ),
    (
        "mat2_innermost_needs_padding",
        "(mat2_stride_0 == 1 and k_padded_length != 0) or (mat2_stride_1 == 1 and n_padded_length != 0)",
        true,
    ),
    (
        "num_dims_needs_padding",
        "if(m_padded_length != 0, 1, 0) + if(k_padded_length != 0, 1, 0) + if(n_padded_length != 0, 1, 0)",
        false,
    ),
    ("m_multiple_2", "m % 2 == 0", true),
    ("m_multiple_4", "m % 4 == 0", true),
    ("m_multiple_8", "m % 8 == 0", true),
    ("m_multiple_16", "m % 16 == 0", true),
    ("m_multiple_32", "m % 32 == 0", true),
    ("k_multiple_2", "k % 2 == 0", true),
    ("k_multiple_4", "k % 4 == 0", true),
    ("k_multiple_8", "k % 8 == 0", true),
    ("k_multiple_16", "k % 16 == 0", true),
    ("k_multiple_32", "k % 32 == 0", true),
    ("n_multiple_2", "n % 2 == 0", true),
    ("n_multiple_4", "n % 4 == 0", true),
    ("n_multiple_8", "n % 8 == 0", true),
    ("n_multiple_16", "n % 16 == 0", true),
    ("n_multiple_32", "n % 32 == 0", true),
    (
        "mat1_iscontig",
        "mat1_stride_0 == k and mat1_stride_1 == 1",
        true,
    ),
    (
        "mat2_iscontig",
        "mat2_stride_0 == n and mat2_stride_1 == 1",
        true,
    ),
];

/// The names [`OPERATION_SPECS`] read.
const OPERATION_INPUTS: [&str; 11] = [
    "m",
    "k",
    "n",
    "mat1_dtype",
    "mat1_stride_0",
    "m_padded_length",
    "mat1_stride_1",
    "k_padded_length",
    "mat2_stride_0",
    "mat2_stride_1",
    "n_padded_length",
];

/// The numbers a range guard may check: the logged numerical features, then the numeric
/// operations, in order ([`PadMm::numbers`]).
pub const NUMBERS: [&str; 18] = [
    "m",
    "k",
    "n",
    "mat1_stride_0",
    "mat1_stride_1",
    "mat2_stride_0",
    "mat2_stride_1",
    "m_padded_length",
    "k_padded_length",
    "n_padded_length",
    "mat1_align_size",
    "mat2_align_size",
    "m*k",
    "m*n",
    "k*n",
    "k/(m*n)",
    "arith_intensity",
    "num_dims_needs_padding",
];

/// [`OPERATION_SPECS`] for the generic path, which evaluates them on any kinds of values.
pub static OPERATIONS: Operations = Operations::new(&OPERATION_SPECS, &OPERATION_INPUTS);

/// The last schema whose contexts were found to hold [`FEATURES`] in order.
static VERIFIED_SCHEMA: VerifiedSchema = VerifiedSchema::new();

/// A `pad_mm` context as PyTorch logs it: the numerical features as integers, the
/// categorical ones as they are (`str()` of any kind is defined).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PadMm<'a> {
    /// `m`
    pub m: i64,
    /// `k`
    pub k: i64,
    /// `n`
    pub n: i64,
    /// `mat1_stride_0`
    pub mat1_stride_0: i64,
    /// `mat1_stride_1`
    pub mat1_stride_1: i64,
    /// `mat2_stride_0`
    pub mat2_stride_0: i64,
    /// `mat2_stride_1`
    pub mat2_stride_1: i64,
    /// `m_padded_length`
    pub m_padded_length: i64,
    /// `k_padded_length`
    pub k_padded_length: i64,
    /// `n_padded_length`
    pub n_padded_length: i64,
    /// `mat1_align_size`
    pub mat1_align_size: i64,
    /// `mat2_align_size`
    pub mat2_align_size: i64,
    /// `mat1_dtype`
    pub mat1_dtype: &'a Value,
    /// `mat2_dtype`
    pub mat2_dtype: &'a Value,
    /// `prepadded_mat1`
    pub prepadded_mat1: &'a Value,
    /// `prepadded_mat2`
    pub prepadded_mat2: &'a Value,
    /// `using_tf32`
    pub using_tf32: &'a Value,
}

impl<'a> PadMm<'a> {
    /// Reads `ctx`: by position when it holds [`FEATURES`] in order (the names are compared
    /// once per [`crate::Schema`]), else by name. `None` when a feature is missing or a
    /// numerical one is not an integer.
    #[inline(always)]
    pub fn read(ctx: &'a Context) -> Option<Self> {
        match VERIFIED_SCHEMA.laid_out(ctx, &FEATURES) {
            // Straight from the features: no array of their values in between.
            Some(features) => Self::from_fn(|i| Some(&features[i].value)),
            None => Self::from_values(read_by_name(ctx, &FEATURES)),
        }
    }

    /// The features from their values in [`FEATURES`] order.
    #[inline(always)]
    pub fn from_values(values: [Option<&'a Value>; 17]) -> Option<Self> {
        Self::from_fn(|i| values[i])
    }

    /// The features from the value of each, by its position in [`FEATURES`].
    #[inline(always)]
    fn from_fn(value: impl Fn(usize) -> Option<&'a Value>) -> Option<Self> {
        let int = |i: usize| match value(i) {
            Some(Value::Int(v)) => Some(*v),
            _ => None,
        };
        Some(PadMm {
            m: int(0)?,
            k: int(1)?,
            n: int(2)?,
            mat1_stride_0: int(3)?,
            mat1_stride_1: int(4)?,
            mat2_stride_0: int(5)?,
            mat2_stride_1: int(6)?,
            m_padded_length: int(7)?,
            k_padded_length: int(8)?,
            n_padded_length: int(9)?,
            mat1_align_size: int(10)?,
            mat2_align_size: int(11)?,
            mat1_dtype: value(12)?,
            mat2_dtype: value(13)?,
            prepadded_mat1: value(14)?,
            prepadded_mat2: value(15)?,
            using_tf32: value(16)?,
        })
    }

    /// PyTorch's operations ([`OPERATION_SPECS`]), in order; the first that fails makes the
    /// heuristic unsure, naming it. Inlined, so a module computes only what it reads and
    /// what can fail.
    #[inline(always)]
    pub fn operations(&self) -> Result<PadMmOps, UnsureKind> {
        let (m, k, n) = (self.m, self.k, self.n);
        let product = |a: i64, b: i64, op: &'static str| {
            a.checked_mul(b).ok_or(UnsureKind::MissingFeature(op))
        };
        let m_times_k = product(m, k, "m*k")?;
        let m_times_n = product(m, n, "m*n")?;
        let k_times_n = product(k, n, "k*n")?;
        let k_over_m_times_n = fdiv(k as f64, product(m, n, "k/(m*n)")? as f64)
            .ok_or(UnsureKind::MissingFeature("k/(m*n)"))?;
        // `and` short-circuits: `n * 1024` is computed (and can fail) only when `k > m * 1024`.
        let bfloat_perf_hit = k > product(m, 1024, "bfloat_perf_hit")?
            && k > product(n, 1024, "bfloat_perf_hit")?
            && matches!(self.mat1_dtype, Value::Str(s) if s == "torch.bfloat16");
        let arith_intensity = if m == 0 || k == 0 || n == 0 {
            0.0
        } else {
            arith_intensity(m, k, n).ok_or(UnsureKind::MissingFeature("arith_intensity"))?
        };
        let needs_padding = |stride_a: i64, pad_a: i64, stride_b: i64, pad_b: i64| {
            (stride_a == 1 && pad_a != 0) || (stride_b == 1 && pad_b != 0)
        };
        let (m_pad, k_pad, n_pad) = (
            self.m_padded_length,
            self.k_padded_length,
            self.n_padded_length,
        );
        // Python's `%` floors, but whether the remainder is 0 does not depend on the sign.
        let multiple = |x: i64, d: i64| x % d == 0;
        Ok(PadMmOps {
            m_times_k,
            m_times_n,
            k_times_n,
            k_over_m_times_n,
            bfloat_perf_hit,
            arith_intensity,
            mat1_innermost_needs_padding: needs_padding(
                self.mat1_stride_0,
                m_pad,
                self.mat1_stride_1,
                k_pad,
            ),
            mat2_innermost_needs_padding: needs_padding(
                self.mat2_stride_0,
                k_pad,
                self.mat2_stride_1,
                n_pad,
            ),
            num_dims_needs_padding: i64::from(m_pad != 0)
                + i64::from(k_pad != 0)
                + i64::from(n_pad != 0),
            m_multiple_2: multiple(m, 2),
            m_multiple_4: multiple(m, 4),
            m_multiple_8: multiple(m, 8),
            m_multiple_16: multiple(m, 16),
            m_multiple_32: multiple(m, 32),
            k_multiple_2: multiple(k, 2),
            k_multiple_4: multiple(k, 4),
            k_multiple_8: multiple(k, 8),
            k_multiple_16: multiple(k, 16),
            k_multiple_32: multiple(k, 32),
            n_multiple_2: multiple(n, 2),
            n_multiple_4: multiple(n, 4),
            n_multiple_8: multiple(n, 8),
            n_multiple_16: multiple(n, 16),
            n_multiple_32: multiple(n, 32),
            mat1_iscontig: self.mat1_stride_0 == k && self.mat1_stride_1 == 1,
            mat2_iscontig: self.mat2_stride_0 == n && self.mat2_stride_1 == 1,
        })
    }
}

impl PadMm<'_> {
    /// [`PadMm::operations`], then `guard` over their values and the features'.
    #[inline(always)]
    pub fn guarded_operations<const N: usize>(
        &self,
        guard: &Guard<N>,
    ) -> Result<PadMmOps, UnsureKind> {
        let o = self.operations()?;
        guard.check(&self.numbers(&o))?;
        Ok(o)
    }

    /// The values of [`NUMBERS`], with the operations' `o`.
    #[inline(always)]
    pub fn numbers(&self, o: &PadMmOps) -> [f64; 18] {
        [
            self.m as f64,
            self.k as f64,
            self.n as f64,
            self.mat1_stride_0 as f64,
            self.mat1_stride_1 as f64,
            self.mat2_stride_0 as f64,
            self.mat2_stride_1 as f64,
            self.m_padded_length as f64,
            self.k_padded_length as f64,
            self.n_padded_length as f64,
            self.mat1_align_size as f64,
            self.mat2_align_size as f64,
            o.m_times_k as f64,
            o.m_times_n as f64,
            o.k_times_n as f64,
            o.k_over_m_times_n,
            o.arith_intensity,
            o.num_dims_needs_padding as f64,
        ]
    }
}

/// A range guard over [`NUMBERS`]: the ranges, and where each one's feature is in
/// [`PadMm::numbers`] (found when the module is compiled).
#[derive(Debug, Clone, Copy)]
pub struct Guard<const N: usize> {
    ranges: &'static [FeatureRange; N],
    at: [usize; N],
}

impl<const N: usize> Guard<N> {
    /// The guard of `ranges`; a name that is not one of [`NUMBERS`] fails to compile (a
    /// panic in a constant).
    pub const fn new(ranges: &'static [FeatureRange; N]) -> Self {
        let mut at = [0; N];
        let mut i = 0;
        while i < N {
            at[i] = position(ranges[i].name);
            i += 1;
        }
        Guard { ranges, at }
    }

    /// [`range_guard`] of `numbers` ([`PadMm::numbers`]).
    #[inline(always)]
    pub fn check(&self, numbers: &[f64; 18]) -> Result<(), UnsureKind> {
        range_guard(self.ranges, self.at.map(|i| Some(numbers[i]))).map(|_| ())
    }
}

/// The position of `name` in [`NUMBERS`] (a constant function: compared byte by byte).
const fn position(name: &str) -> usize {
    let mut i = 0;
    while i < NUMBERS.len() {
        let (a, b) = (NUMBERS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("a pad_mm range guard checks a feature that is not one of NUMBERS")
}

/// `m * k * n / (m * k + k * n + m * n)`: `None` on overflow or a zero denominator.
#[inline(always)]
fn arith_intensity(m: i64, k: i64, n: i64) -> Option<f64> {
    let mk = m.checked_mul(k)?;
    let volume = mk.checked_mul(n)?;
    let surface = mk
        .checked_add(k.checked_mul(n)?)?
        .checked_add(m.checked_mul(n)?)?;
    fdiv(volume as f64, surface as f64)
}

/// The values of PyTorch's `pad_mm` operations ([`OPERATION_SPECS`]), one field each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PadMmOps {
    /// `m*k`
    pub m_times_k: i64,
    /// `m*n`
    pub m_times_n: i64,
    /// `k*n`
    pub k_times_n: i64,
    /// `k/(m*n)`
    pub k_over_m_times_n: f64,
    /// `bfloat_perf_hit`
    pub bfloat_perf_hit: bool,
    /// `arith_intensity`
    pub arith_intensity: f64,
    /// `mat1_innermost_needs_padding`
    pub mat1_innermost_needs_padding: bool,
    /// `mat2_innermost_needs_padding`
    pub mat2_innermost_needs_padding: bool,
    /// `num_dims_needs_padding`
    pub num_dims_needs_padding: i64,
    /// `m_multiple_2`
    pub m_multiple_2: bool,
    /// `m_multiple_4`
    pub m_multiple_4: bool,
    /// `m_multiple_8`
    pub m_multiple_8: bool,
    /// `m_multiple_16`
    pub m_multiple_16: bool,
    /// `m_multiple_32`
    pub m_multiple_32: bool,
    /// `k_multiple_2`
    pub k_multiple_2: bool,
    /// `k_multiple_4`
    pub k_multiple_4: bool,
    /// `k_multiple_8`
    pub k_multiple_8: bool,
    /// `k_multiple_16`
    pub k_multiple_16: bool,
    /// `k_multiple_32`
    pub k_multiple_32: bool,
    /// `n_multiple_2`
    pub n_multiple_2: bool,
    /// `n_multiple_4`
    pub n_multiple_4: bool,
    /// `n_multiple_8`
    pub n_multiple_8: bool,
    /// `n_multiple_16`
    pub n_multiple_16: bool,
    /// `n_multiple_32`
    pub n_multiple_32: bool,
    /// `mat1_iscontig`
    pub mat1_iscontig: bool,
    /// `mat2_iscontig`
    pub mat2_iscontig: bool,
}

impl PadMmOps {
    /// The Rust field of operation `name` ([`OPERATION_SPECS`]): `*` reads `_times_`, `/`
    /// reads `_over_`, parentheses go (`k/(m*n)` is `k_over_m_times_n`).
    pub fn field(name: &str) -> String {
        name.replace('*', "_times_")
            .replace('/', "_over_")
            .replace(['(', ')'], "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::builtin_operations;
    use crate::Schema;

    fn context(sizes: [i64; 12], dtype: &str) -> Context {
        let mut ctx = Context::new();
        for (name, v) in FEATURES.iter().zip(sizes) {
            ctx.add(*name, v);
        }
        ctx.add_categorical("mat1_dtype", dtype)
            .add_categorical("mat2_dtype", dtype)
            .add_categorical("prepadded_mat1", false)
            .add_categorical("prepadded_mat2", true)
            .add_categorical("using_tf32", "not_float_32");
        ctx
    }

    /// The typed operations against the expression language's on the same context: each
    /// value, or the operation named by the first failure.
    fn assert_like_generic(ctx: &Context) {
        let typed = PadMm::read(ctx).expect("a logged context").operations();
        let generic = OPERATIONS.apply(ctx);
        match (typed, generic) {
            (Ok(o), Ok(s)) => {
                let values = [
                    Value::Int(o.m_times_k),
                    Value::Int(o.m_times_n),
                    Value::Int(o.k_times_n),
                    Value::Float(o.k_over_m_times_n),
                    Value::Bool(o.bfloat_perf_hit),
                    Value::Float(o.arith_intensity),
                    Value::Bool(o.mat1_innermost_needs_padding),
                    Value::Bool(o.mat2_innermost_needs_padding),
                    Value::Int(o.num_dims_needs_padding),
                    Value::Bool(o.m_multiple_2),
                    Value::Bool(o.m_multiple_4),
                    Value::Bool(o.m_multiple_8),
                    Value::Bool(o.m_multiple_16),
                    Value::Bool(o.m_multiple_32),
                    Value::Bool(o.k_multiple_2),
                    Value::Bool(o.k_multiple_4),
                    Value::Bool(o.k_multiple_8),
                    Value::Bool(o.k_multiple_16),
                    Value::Bool(o.k_multiple_32),
                    Value::Bool(o.n_multiple_2),
                    Value::Bool(o.n_multiple_4),
                    Value::Bool(o.n_multiple_8),
                    Value::Bool(o.n_multiple_16),
                    Value::Bool(o.n_multiple_32),
                    Value::Bool(o.mat1_iscontig),
                    Value::Bool(o.mat2_iscontig),
                ];
                for ((name, _, _), v) in OPERATION_SPECS.iter().zip(&values) {
                    assert_eq!(s.get(name), Some(v), "{name} of {ctx:?}");
                }
            }
            (typed, generic) => assert_eq!(typed.err(), generic.err(), "{ctx:?}"),
        }
    }

    #[test]
    fn specs_are_pytorchs_builtin_operations() {
        let builtin = builtin_operations("pad_mm");
        assert_eq!(builtin.len(), OPERATION_SPECS.len());
        for (b, (name, expr, categorical)) in builtin.iter().zip(OPERATION_SPECS) {
            let op = crate::Operation::parse(name, expr, categorical).unwrap();
            assert_eq!(
                (&op.name, &op.expr, op.is_categorical),
                (&b.name, &b.expr, b.is_categorical)
            );
        }
        let mut inputs: Vec<&str> = Vec::new();
        for op in &builtin {
            for i in op.inputs() {
                if !inputs.contains(&i) {
                    inputs.push(i);
                }
            }
        }
        assert_eq!(inputs, OPERATION_INPUTS);
    }

    #[test]
    fn operations_equal_the_expression_languages() {
        let shapes = [
            [1024, 4096, 768, 4096, 1, 768, 1, 0, 0, 0, 8, 8],
            [513, 2047, 1000, 1, 513, 1, 2047, 3, 1, 0, 8, 8],
            [8, 40960, 8, 40960, 1, 1, 40960, 0, 0, 0, 8, 8],
            [0, 5, 7, 5, 1, 7, 1, 0, 3, 1, 4, 4],
            [-6, 4, -12, 4, 1, 1, 4, 2, 0, 4, 8, 8],
            // Overflows: `m*k` first, then only `arith_intensity`'s `m*k*n`, then `m * 1024`.
            [i64::MAX, 2, 1, 1, 1, 1, 1, 0, 0, 0, 8, 8],
            [1 << 22, 1 << 21, 1 << 21, 1, 1, 1, 1, 0, 0, 0, 8, 8],
            [1 << 54, 1, 1, 1, 1, 1, 1, 0, 0, 0, 8, 8],
            [1, 1 << 62, 1 << 54, 1, 1, 1, 1, 0, 0, 0, 8, 8],
            // A zero denominator: `k/(m*n)` fails first.
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ];
        for sizes in shapes {
            for dtype in ["torch.bfloat16", "torch.float16"] {
                assert_like_generic(&context(sizes, dtype));
            }
        }
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2000 {
            let mut sizes = [0; 12];
            for s in &mut sizes {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Small values, with a few huge ones and a few negative ones.
                *s = match seed % 16 {
                    0 => (seed >> 4) as i64,
                    1 => -((seed >> 40) as i64),
                    _ => ((seed >> 8) % 70_000) as i64,
                };
            }
            assert_like_generic(&context(sizes, "torch.bfloat16"));
        }
    }

    #[test]
    fn reads_by_position_or_by_name_and_only_logged_kinds() {
        let ctx = context([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "torch.float16");
        let x = PadMm::read(&ctx).unwrap();
        assert_eq!((x.m, x.k, x.n, x.mat2_align_size), (1, 2, 3, 12));
        assert_eq!(x.prepadded_mat2, &Value::Bool(true));
        let schema = Schema::new(
            ctx.features()
                .iter()
                .map(|f| (f.name.clone(), f.is_categorical)),
        );
        let values = ctx.features().iter().map(|f| f.value.clone()).collect();
        let laid_out = Context::from_schema(&schema, values).unwrap();
        assert_eq!(PadMm::read(&laid_out), Some(x));
        // Another order, and a later feature that shadows an earlier one, are read by name.
        let mut shuffled = Context::new();
        for f in ctx.features().iter().rev() {
            shuffled.add_feature(f.name.clone(), f.value.clone(), f.is_categorical);
        }
        shuffled.add("k", 20i64);
        assert_eq!(PadMm::read(&shuffled).map(|x| x.k), Some(20));
        // A float size or a missing feature: not a logged context.
        let mut float = ctx.clone();
        float.set("n", Value::Float(3.0), false);
        assert_eq!(PadMm::read(&float), None);
        let mut partial = Context::new();
        partial.add("m", 1i64);
        assert_eq!(PadMm::read(&partial), None);
    }

    #[test]
    fn the_guard_checks_numbers_by_name_in_range_order() {
        static RANGES: [FeatureRange; 2] = [
            FeatureRange {
                name: "k/(m*n)",
                min: 0.0,
                max: 1.0,
            },
            FeatureRange {
                name: "m",
                min: 1.0,
                max: 2.0,
            },
        ];
        const GUARD: Guard<2> = Guard::new(&RANGES);
        assert_eq!(GUARD.at, [15, 0]);
        let ctx = context([4, 2, 1, 2, 1, 1, 1, 0, 0, 0, 8, 8], "torch.float16");
        let x = PadMm::read(&ctx).unwrap();
        let numbers = x.numbers(&x.operations().unwrap());
        assert_eq!(numbers[15], 0.5);
        assert_eq!(GUARD.check(&numbers), Err(UnsureKind::OutOfRange("m")));
        assert_eq!(
            x.guarded_operations(&GUARD),
            Err(UnsureKind::OutOfRange("m"))
        );
        for (i, name) in NUMBERS.iter().enumerate() {
            assert_eq!(position(name), i);
        }
    }

    #[test]
    fn operation_fields_are_named_after_the_operations() {
        assert_eq!(PadMmOps::field("m*k"), "m_times_k");
        assert_eq!(PadMmOps::field("k/(m*n)"), "k_over_m_times_n");
        assert_eq!(PadMmOps::field("mat2_iscontig"), "mat2_iscontig");
    }
}
