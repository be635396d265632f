//! The `cublaslt_mm` runner (formerly `mm`; the file keeps its name): which cuBLASLt algorithm should run a matmul?
//!
//! For every input (m, k, n, dtype, the transposes of both operands) the runner asks
//! cuBLASLt's heuristic (`cublasLtMatmulAlgoGetHeuristic`) for up to
//! [`MmRunner::requested_algos`] candidate algorithms, names each by its configuration
//! attributes ([`AlgoConfig::choice_id`], e.g.
//! `algo66-tile20-stages8-splitk1-red0-swz0-cus0-in0-cl0`) and times every candidate with the
//! backend's timing (CUDA events, L2 flush, min logged). The choice `extern_mm` is cuBLASLt's
//! first-ranked candidate, the algorithm a user of cuBLASLt gets by default; it is timed like
//! the others, as its own choice, so the log says how good the library's own pick is.
//!
//! Features are PyTorch's tuned_mm features (`kernel/mm.py:mm_autoheuristic`, spec section 4),
//! in its column order: `m, k, n, mat1_dtype, mat2_dtype, mat1_stride_0, mat1_stride_1,
//! mat2_stride_0, mat2_stride_1, mat1_iscontig, mat2_iscontig, using_tf32`. fp32 inputs run
//! with TF32 tensor cores (`using_tf32 = True`).
//!
//! Inputs mix two sources (both seeded per sample):
//! - PyTorch's mm generator (`torchgen/_autoheuristic/mm/gen_data_mm.py`, spec section 10):
//!   dtype uniform over fp32/fp16/bf16; per dim 85 % a multiple of 128 in `[2^10, 2^max]`, 10 %
//!   a power of two `2^0..2^max`, 4 % uniform in `1..=2^max`, 1 % strictly between two powers
//!   of two; a shape with any pairwise product `>= 2^31` is drawn again; one of the four
//!   transpose combinations uniformly (PyTorch times all four per shape);
//! - with probability [`MmRunner::model_share`], a GEMM of a transformer layer
//!   ([`MODEL_LAYERS`]: QKV, output projection, MLP up/down, LM head) at a batch x sequence
//!   size, as the forward pass (`x @ W.t()`) or one of the two backward GEMMs (PyTorch adds
//!   HuggingFace and TIMM logs to the random ones for the same reason).
//!
//! Shapes whose GEMM exceeds [`MmRunner::max_flops`] or a quarter of the device memory are
//! drawn again: the cap keeps a collection of thousands of inputs within minutes.

pub mod cublaslt;

use ah_core::Context;
use rand::Rng;

pub use cublaslt::{AlgoConfig, Candidate, GemmShape, LtHandle, MatmulPlan, WORKSPACE_BYTES};

use crate::backend::cuda::{CudaBackend, DeviceBuffer, GemmArgs};
use crate::backend::{Backend, BackendKind, BenchError, Measurement};
use crate::dtype::DType;
use crate::runner::{BenchmarkRunner, SampleRng, Target};
use crate::runners::add_mm_layout_features;

/// The choice that stands for cuBLASLt's own pick (its first-ranked candidate).
pub const EXTERN_MM: &str = "extern_mm";

/// Hidden and intermediate sizes of common transformer models (hidden, MLP intermediate,
/// key/value width for grouped-query attention, vocabulary): BERT-base, BERT-large/GPT-2
/// medium, GPT-2 XL, Llama-2-7B, Llama-3-8B/Mistral-7B, Llama-2-13B, Llama-2-70B/Llama-3-70B,
/// Phi-2, Qwen2-1.5B.
pub const MODEL_LAYERS: &[ModelLayer] = &[
    ModelLayer::new(768, 3072, 768, 30522),
    ModelLayer::new(1024, 4096, 1024, 50257),
    ModelLayer::new(1600, 6400, 1600, 50257),
    ModelLayer::new(4096, 11008, 4096, 32000),
    ModelLayer::new(4096, 14336, 1024, 128256),
    ModelLayer::new(5120, 13824, 5120, 32000),
    ModelLayer::new(8192, 28672, 1024, 128256),
    ModelLayer::new(2560, 10240, 2560, 51200),
    ModelLayer::new(1536, 8960, 256, 151936),
];

/// Batch sizes and sequence lengths the model shapes use (m = batch x sequence; sequence 1 is
/// decoding).
pub const MODEL_BATCHES: &[usize] = &[1, 2, 4, 8, 16, 32, 64];
/// See [`MODEL_BATCHES`].
pub const MODEL_SEQUENCES: &[usize] = &[1, 128, 256, 512, 1024, 2048, 4096];

/// One transformer's layer sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelLayer {
    /// Hidden size.
    pub hidden: usize,
    /// MLP intermediate size.
    pub intermediate: usize,
    /// Width of K and V each (grouped-query attention; `hidden` for multi-head).
    pub kv: usize,
    /// Vocabulary (LM head).
    pub vocab: usize,
}

impl ModelLayer {
    /// A layer description.
    pub const fn new(hidden: usize, intermediate: usize, kv: usize, vocab: usize) -> Self {
        Self {
            hidden,
            intermediate,
            kv,
            vocab,
        }
    }

    /// The linear layers as (in features, out features): QKV, output projection, MLP up,
    /// MLP down, LM head.
    pub fn linears(&self) -> [(usize, usize); 5] {
        [
            (self.hidden, self.hidden + 2 * self.kv),
            (self.hidden, self.hidden),
            (self.hidden, self.intermediate),
            (self.intermediate, self.hidden),
            (self.hidden, self.vocab),
        ]
    }
}

/// Where an input's shape came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeSource {
    /// PyTorch's random mm generator.
    Random,
    /// A transformer layer's GEMM.
    Model,
}

/// One mm input: `mat1 (m x k) @ mat2 (k x n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmInput {
    /// Rows of mat1.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of mat2.
    pub n: usize,
    /// Element type of both operands and the result (fp32 runs with TF32).
    pub dtype: DType,
    /// mat1 is `randn(k, m).t()` (strides `(1, m)`).
    pub trans_a: bool,
    /// mat2 is `randn(n, k).t()` (strides `(1, k)`).
    pub trans_b: bool,
    /// Where the shape came from (not logged).
    pub source: ShapeSource,
}

impl MmInput {
    /// Strides of mat1.
    pub fn mat1_strides(&self) -> (usize, usize) {
        crate::runners::operand_strides(self.m, self.k, self.trans_a)
    }
    /// Strides of mat2.
    pub fn mat2_strides(&self) -> (usize, usize) {
        crate::runners::operand_strides(self.k, self.n, self.trans_b)
    }
    /// The GEMM shape.
    pub fn shape(&self) -> GemmShape {
        GemmShape {
            m: self.m,
            k: self.k,
            n: self.n,
            trans_a: self.trans_a,
            trans_b: self.trans_b,
            dtype: self.dtype,
        }
    }
    /// `2 m n k`.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    /// Bytes of the three matrices.
    pub fn bytes(&self) -> f64 {
        self.dtype.itemsize() as f64
            * (self.m as f64 * self.k as f64
                + self.k as f64 * self.n as f64
                + self.m as f64 * self.n as f64)
    }
}

/// The `cublaslt_mm` runner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmRunner {
    /// Largest dimension of the random generator as a power of two (PyTorch: 17).
    pub max_power2: u32,
    /// Largest `2 m n k` drawn (default 2^39, about 1 ms in bf16 on an H100).
    pub max_flops: f64,
    /// Share of inputs taken from transformer layers.
    pub model_share: f64,
    /// Candidates asked of cuBLASLt's heuristic.
    pub requested_algos: usize,
}

impl Default for MmRunner {
    fn default() -> Self {
        Self {
            max_power2: 17,
            max_flops: (1u64 << 39) as f64,
            model_share: 0.3,
            requested_algos: 16,
        }
    }
}

fn random_dtype(rng: &mut SampleRng) -> DType {
    [DType::F32, DType::F16, DType::BF16][rng.random_range(0..3)]
}

impl MmRunner {
    /// The default runner scaled by the command line (`--max-dim` sets
    /// [`max_power2`](Self::max_power2)).
    pub fn with_options(options: &crate::runners::RunnerOptions) -> Self {
        let mut r = Self::default();
        if let Some(p) = options.max_power2 {
            r.max_power2 = p;
        }
        r
    }

    /// PyTorch's `get_random_dim` of the mm generator, up to `2^max_p`.
    fn random_dim(rng: &mut SampleRng, max_p: u32) -> usize {
        let max_p = max_p.max(2);
        let r: f64 = rng.random();
        if r < 0.85 && max_p >= 10 {
            rng.random_range(8..=(1usize << max_p) / 128) * 128
        } else if r < 0.95 {
            1usize << rng.random_range(0..=max_p)
        } else if r < 0.99 {
            rng.random_range(1..=1usize << max_p)
        } else {
            let i = rng.random_range(1..max_p);
            rng.random_range((1usize << i) + 1..=(1usize << (i + 1)) - 1)
        }
    }

    fn random_shape(&self, rng: &mut SampleRng) -> MmInput {
        let dtype = random_dtype(rng);
        let (m, k, n) = loop {
            let (m, k, n) = (
                Self::random_dim(rng, self.max_power2),
                Self::random_dim(rng, self.max_power2),
                Self::random_dim(rng, self.max_power2),
            );
            let limit = 1usize << 31;
            if m * k < limit && k * n < limit && m * n < limit {
                break (m, k, n);
            }
        };
        let t = rng.random_range(0..4);
        MmInput {
            m,
            k,
            n,
            dtype,
            trans_a: t & 1 == 1,
            trans_b: t & 2 == 2,
            source: ShapeSource::Random,
        }
    }

    fn model_shape(rng: &mut SampleRng) -> MmInput {
        let layer = MODEL_LAYERS[rng.random_range(0..MODEL_LAYERS.len())];
        let (fin, fout) = layer.linears()[rng.random_range(0..5)];
        let tokens = MODEL_BATCHES[rng.random_range(0..MODEL_BATCHES.len())]
            * MODEL_SEQUENCES[rng.random_range(0..MODEL_SEQUENCES.len())];
        // bf16 and fp16 (mixed precision) most of the time, fp32/TF32 sometimes.
        let dtype = match rng.random_range(0..10) {
            0..=4 => DType::BF16,
            5..=7 => DType::F16,
            _ => DType::F32,
        };
        let (m, k, n, trans_a, trans_b) = match rng.random_range(0..4) {
            // Forward: y = x @ W.t(), W stored (out, in).
            0 | 1 => (tokens, fin, fout, false, true),
            // Backward, input gradient: dx = dy @ W.
            2 => (tokens, fout, fin, false, false),
            // Backward, weight gradient: dW = dy.t() @ x.
            _ => (fout, tokens, fin, true, false),
        };
        MmInput {
            m,
            k,
            n,
            dtype,
            trans_a,
            trans_b,
            source: ShapeSource::Model,
        }
    }

    /// Whether an input fits the time cap and a quarter of the memory.
    fn fits(&self, i: &MmInput, target: &Target) -> bool {
        i.flops() <= self.max_flops
            && (target.total_memory == 0 || i.bytes() < target.total_memory as f64 / 4.0)
    }
}

/// Per-input state on the GPU.
pub struct MmPrepared {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: DeviceBuffer,
    workspace: DeviceBuffer,
    handle: LtHandle,
    plan: MatmulPlan,
    /// `(choice id, candidate)` in logging order; `extern_mm` first.
    choices: Vec<(String, Candidate)>,
}

impl std::fmt::Debug for MmPrepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MmPrepared")
            .field("shape", &self.plan.shape())
            .field(
                "choices",
                &self.choices.iter().map(|(c, _)| c).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl MmPrepared {
    /// The choices in logging order (`extern_mm`, then cuBLASLt's candidates in its order,
    /// each configuration once).
    pub fn choice_ids(&self) -> Vec<String> {
        self.choices.iter().map(|(c, _)| c.clone()).collect()
    }

    /// The choices named by rank in cuBLASLt's list ([`rank_choice_id`]): `extern_mm`,
    /// `lt2`, `lt3`, ... (what the re-ranking heuristic chooses among).
    pub fn rank_choice_ids(&self) -> Vec<String> {
        (1..self.choices.len()).map(rank_choice_id).collect()
    }

    fn candidate(&self, choice: &str) -> Result<&Candidate, BenchError> {
        let ids: Vec<&str> = self.choices.iter().map(|(c, _)| c.as_str()).collect();
        choice_index(&ids, choice)
            .map(|i| &self.choices[i].1)
            .ok_or_else(|| {
                BenchError::Other(format!(
                    "mm: cuBLASLt offered no algorithm `{choice}` for this input"
                ))
            })
    }

    /// Enqueues the GEMM with one choice's algorithm on the backend's stream.
    pub fn enqueue(&self, cuda: &CudaBackend, choice: &str) -> Result<(), BenchError> {
        let cand = self.candidate(choice)?;
        self.plan.launch(
            &self.handle,
            &cand.algo,
            self.a.ptr(),
            self.b.ptr(),
            self.c.ptr(),
            self.workspace.ptr(),
            self.workspace.bytes(),
            cuda.stream().cu_stream(),
        )
    }
}

/// The id of cuBLASLt's `rank`-th candidate (1-based) in a rank-named log: `extern_mm` for
/// its first pick, `lt2`, `lt3`, ... for the others. Unlike configuration ids, rank ids mean the
/// same thing for every input, so a heuristic over them (a re-ranking of cuBLASLt's list)
/// generalizes to shapes whose configurations it never saw.
pub fn rank_choice_id(rank: usize) -> String {
    if rank <= 1 {
        EXTERN_MM.to_string()
    } else {
        format!("lt{rank}")
    }
}

/// The rank of a rank id (`extern_mm` is 1, `lt3` is 3); `None` for anything else.
pub fn parse_rank_choice(id: &str) -> Option<usize> {
    if id == EXTERN_MM {
        return Some(1);
    }
    let digits = id.strip_prefix("lt")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&j| j >= 2)
}

/// Where a choice is in an input's choice list (`extern_mm`, then cuBLASLt's candidates in its
/// order): a configuration id or `extern_mm` by name, a rank id `ltJ` as cuBLASLt's J-th
/// candidate (entry J; entry 1 is the first candidate again under its configuration id).
pub fn choice_index(ids: &[&str], choice: &str) -> Option<usize> {
    match parse_rank_choice(choice) {
        Some(j) if j >= 2 => (j < ids.len()).then_some(j),
        _ => ids.iter().position(|c| *c == choice),
    }
}

/// Why a log cannot be renamed by rank.
#[derive(Debug, thiserror::Error)]
pub enum RankLogError {
    /// A sample does not start with `extern_mm` followed by configuration ids.
    #[error("{path}: row {row}: expected `extern_mm` then cuBLASLt configuration ids per sample, found `{choice}`")]
    Layout {
        /// The log.
        path: String,
        /// 1-based data row.
        row: usize,
        /// The unexpected choice.
        choice: String,
    },
}

/// Renames a configuration-id mm log by rank: per sample (a block of rows starting with
/// `extern_mm`, as the runner logs them, one repetition after another), `extern_mm` keeps its
/// name, the next row (the same kernel under its configuration id) is dropped, and the J-th
/// candidate after it becomes `ltJ`. Returns the lines of the new log (metadata and header
/// unchanged).
pub fn rank_log_lines(log: &ah_log::Log) -> Result<Vec<String>, RankLogError> {
    let mut out = vec![log.metadata_line.clone(), log.header_line()];
    let mut rank = 0usize;
    for (i, row) in log.rows.iter().enumerate() {
        let choice = log.choice_name(row);
        let bad = || RankLogError::Layout {
            path: log.path.display().to_string(),
            row: i + 1,
            choice: choice.to_string(),
        };
        if choice == EXTERN_MM {
            rank = 1;
            out.push(log.row_line(row));
            continue;
        }
        if rank == 0 || AlgoConfig::parse(choice).is_none() {
            return Err(bad());
        }
        rank += 1;
        if rank == 2 {
            // cuBLASLt's first candidate again, under its configuration id.
            continue;
        }
        out.push(log.row_line_as(row, &rank_choice_id(rank - 1)));
    }
    Ok(out)
}

/// Allocates and fills an input's buffers, creates the cuBLASLt plan and asks for candidates.
pub fn prepare_cuda(
    i: &MmInput,
    cuda: &mut CudaBackend,
    requested: usize,
) -> Result<MmPrepared, BenchError> {
    let e = i.dtype.itemsize();
    let a = cuda.alloc(i.m * i.k * e)?;
    let b = cuda.alloc(i.k * i.n * e)?;
    let c = cuda.alloc(i.m * i.n * e)?;
    let workspace = cuda.alloc(WORKSPACE_BYTES)?;
    cuda.fill_random(a.ptr(), i.m * i.k, i.dtype)?;
    cuda.fill_random(b.ptr(), i.k * i.n, i.dtype)?;
    cuda.synchronize()?;
    let handle = LtHandle::new()?;
    let plan = MatmulPlan::new(i.shape())?;
    let candidates = plan.candidates(&handle, requested)?;
    let Some(first) = candidates.first() else {
        return Err(BenchError::Unsupported(format!(
            "cuBLASLt has no algorithm for {i:?}"
        )));
    };
    let mut choices = vec![(EXTERN_MM.to_string(), *first)];
    for cand in &candidates {
        let id = cand.config.choice_id();
        if !choices.iter().any(|(c, _)| *c == id) {
            choices.push((id, *cand));
        }
    }
    Ok(MmPrepared {
        a,
        b,
        c,
        workspace,
        handle,
        plan,
        choices,
    })
}

impl BenchmarkRunner for MmRunner {
    type Input = MmInput;
    type Prepared = MmPrepared;

    fn name(&self) -> &'static str {
        // Not PyTorch's `mm`: the choices are cuBLASLt's candidates, which Inductor's `mm`
        // hook does not know. Logs written as `mm` before the rename still resume and train
        // (`ah_core::optimization::log_name`).
        ah_core::optimization::CUBLASLT_MM
    }

    fn description(&self) -> &'static str {
        "which cuBLASLt algorithm runs a matmul (its heuristic's candidates, extern_mm = its first pick); PyTorch's mm features"
    }

    fn choices(&self) -> Vec<String> {
        // The algorithms are found per input; extern_mm is always there.
        vec![EXTERN_MM.into()]
    }

    fn supports(&self, kind: BackendKind) -> bool {
        kind == BackendKind::Cuda
    }

    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> MmInput {
        loop {
            let i = if rng.random_bool(self.model_share.clamp(0.0, 1.0)) {
                Self::model_shape(rng)
            } else {
                self.random_shape(rng)
            };
            if self.fits(&i, target) {
                return i;
            }
        }
    }

    fn context(&self, i: &MmInput) -> Context {
        let mut c = Context::with_capacity(12);
        c.add("m", i.m).add("k", i.k).add("n", i.n);
        // fp32 runs with TF32 tensor cores.
        add_mm_layout_features(
            &mut c,
            (i.m, i.k, i.n),
            (i.trans_a, i.trans_b),
            i.dtype,
            true,
        );
        c
    }

    fn prepare(&self, i: &MmInput, backend: &mut Backend) -> Result<MmPrepared, BenchError> {
        prepare_cuda(i, backend.cuda()?, self.requested_algos)
    }

    fn input_choices(
        &self,
        _input: &MmInput,
        prepared: &mut MmPrepared,
        _backend: &mut Backend,
    ) -> Result<Vec<String>, BenchError> {
        Ok(prepared.choice_ids())
    }

    fn run(
        &self,
        _input: &MmInput,
        prepared: &mut MmPrepared,
        choice: &str,
        warmup: bool,
        backend: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        let cuda = backend.cuda()?;
        let p = &*prepared;
        p.candidate(choice)?;
        cuda.bench(warmup, &mut |c| p.enqueue(c, choice))
    }
}

/// Result of [`check_against_reference`] for one choice.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceCheck {
    /// The choice id.
    pub choice: String,
    /// `max |C - C_ref| / max |C_ref|`, `C_ref` from cuBLAS's default GEMM.
    pub rel_err: f64,
}

/// Runs every candidate of `i` once and compares its result with cuBLAS's default GEMM
/// (`cublasGemmEx`, the backend's reference) on the same operands.
pub fn check_against_reference(
    i: &MmInput,
    cuda: &mut CudaBackend,
    requested: usize,
) -> Result<Vec<ChoiceCheck>, BenchError> {
    let p = prepare_cuda(i, cuda, requested)?;
    let e = i.dtype.itemsize();
    let c_bytes = i.m * i.n * e;
    let reference = cuda.alloc(c_bytes)?;
    cuda.gemm(&GemmArgs {
        m: i.m,
        k: i.k,
        n: i.n,
        a: p.a.ptr(),
        trans_a: i.trans_a,
        lda: i.shape().lda(),
        b: p.b.ptr(),
        trans_b: i.trans_b,
        ldb: i.shape().ldb(),
        c: reference.ptr(),
        ldc: i.n,
        dtype: i.dtype,
        tf32: true,
    })?;
    let want = crate::dtype::decode(&cuda.download(reference.ptr(), c_bytes)?, i.dtype);
    let scale = want
        .iter()
        .fold(0f64, |s, x| s.max(f64::from(*x).abs()))
        .max(f64::MIN_POSITIVE);
    let mut out = Vec::new();
    for choice in p.choice_ids() {
        cuda.zero(p.c.ptr(), c_bytes)?;
        p.enqueue(cuda, &choice)?;
        let got = crate::dtype::decode(&cuda.download(p.c.ptr(), c_bytes)?, i.dtype);
        let mut err = 0f64;
        for (g, w) in got.iter().zip(&want) {
            let d = (f64::from(*g) - f64::from(*w)).abs();
            err = if d.is_nan() {
                f64::INFINITY
            } else {
                err.max(d)
            };
        }
        out.push(ChoiceCheck {
            choice,
            rel_err: err / scale,
        });
    }
    Ok(out)
}

/// Tolerance of [`ChoiceCheck::rel_err`] per dtype: algorithms differ in summation order
/// (split-K) and in how TF32 rounds.
pub fn check_tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-2,
        DType::F16 => 1e-2,
        DType::BF16 => 3e-2,
    }
}

/// True when `(m, k, n)` with these transposes is a GEMM of one of [`MODEL_LAYERS`]
/// (forward or backward) at some batch x sequence size: lets evaluations report model shapes
/// separately.
pub fn is_model_shape(m: usize, k: usize, n: usize, trans_a: bool, trans_b: bool) -> bool {
    let tokens = |t: usize| {
        MODEL_BATCHES
            .iter()
            .any(|b| MODEL_SEQUENCES.iter().any(|s| b * s == t))
    };
    MODEL_LAYERS.iter().any(|l| {
        l.linears().iter().any(|&(fin, fout)| {
            (!trans_a && trans_b && k == fin && n == fout && tokens(m))
                || (!trans_a && !trans_b && k == fout && n == fin && tokens(m))
                || (trans_a && !trans_b && m == fout && n == fin && tokens(k))
        })
    })
}

#[cfg(test)]
mod tests;
