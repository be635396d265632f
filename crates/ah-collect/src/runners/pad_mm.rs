//! The `pad_mm` runner: should a matmul with unaligned dimensions be padded?
//!
//! Inputs follow PyTorch's generator (`torchgen/_autoheuristic/pad_mm/gen_data_pad_mm.py`,
//! spec section 10): dtype uniform over fp16/bf16/fp32, fp32 precision "highest" with
//! probability 0.8 (else TF32), dims half the time uniform in `1..=2^max_power2`, else per dim
//! 75 % a power of two `2^1..2^max_power2` and 25 % strictly between two powers of two;
//! all-aligned shapes and shapes that do not fit in a quarter of the device memory are drawn
//! again; both operands transposed with probability 0.05, else one of {left, right, none};
//! each operand "prepadded" (`a + 1` before the mm) with probability 0.2.
//!
//! With `--shapes real` inputs are instead the GEMMs of real models' linear layers
//! ([`real_models`]); `--shapes mix` takes them w.p. [`MIX_REAL`] per sample, else PyTorch's
//! generator (see [`ShapeDistribution`]).
//!
//! Features are those of PyTorch's `pad_mm.get_context`; a transposed operand is never
//! prepadded (`should_exclude_padding_time` is false for non-contiguous tensors).
//!
//! Choices, timed as PyTorch's `_should_pad` builds them:
//! - `orig`: cuBLAS GEMM on the given shapes and layouts;
//! - `pad`: for each operand that needs padding and is not prepadded, `constant_pad_nd`
//!   (zero the padded buffer, copy the operand in: PyTorch's fill + copy); for a prepadded
//!   operand only the zeroing of its padding (`mat[-p:, -q:].fill_(0)`); then the GEMM on the
//!   padded shapes; the result is a slice view (no copy), as in PyTorch.

pub mod real_models;

use std::sync::Arc;

use ah_core::{Context, DeviceIdentity};
use rand::Rng;

use crate::backend::cpu::sgemm;
use crate::backend::cuda::{DeviceBuffer, GemmArgs};
use crate::backend::{Backend, BackendKind, BenchError, Measurement};
use crate::catalogue::Catalogue;
use crate::dtype::DType;
use crate::runner::{BenchmarkRunner, InputDistribution, SampleRng, Target};

/// One pad_mm input: `mat1 (m x k) @ mat2 (k x n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PadMmInput {
    /// Rows of mat1.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of mat2.
    pub n: usize,
    /// Element type of both operands.
    pub dtype: DType,
    /// `torch.backends.cuda.matmul.allow_tf32` ("high" precision); only fp32 uses it.
    pub allow_tf32: bool,
    /// mat1 is `randn(k, m).t()`.
    pub transpose_left: bool,
    /// mat2 is `randn(n, k).t()`.
    pub transpose_right: bool,
    /// The generator asked for mat1 to be computed (`a + 1`) before the mm.
    pub prepadded_left: bool,
    /// Same for mat2.
    pub prepadded_right: bool,
    /// mat1 is produced in the compiled graph even when it is a transposed view (the gradient
    /// `dy.t()` of a weight's backward GEMM): Inductor fuses its padding into the producer, so
    /// `pad` is timed without mat1's padding copy, as for a pre-padded operand. Not a feature:
    /// PyTorch logs such an operand as not prepadded. Only the real-model sampler sets it.
    pub fuse_mat1_pad: bool,
}

/// PyTorch's `get_padded_length`.
pub fn padded_length(x: usize, align: usize) -> usize {
    if align == 0 || x.is_multiple_of(align) || x == 1 {
        0
    } else {
        (x / align + 1) * align - x
    }
}

/// PyTorch's `Tensor.is_contiguous` for a 2-D shape and strides.
pub fn is_contiguous(rows: usize, cols: usize, s0: usize, s1: usize) -> bool {
    let mut expected = 1;
    if cols != 1 {
        if s1 != 1 {
            return false;
        }
        expected = cols;
    }
    rows == 1 || s0 == expected
}

impl PadMmInput {
    /// Strides of mat1: `(k, 1)`, or `(1, m)` when transposed.
    pub fn mat1_strides(&self) -> (usize, usize) {
        if self.transpose_left {
            (1, self.m)
        } else {
            (self.k, 1)
        }
    }
    /// Strides of mat2: `(n, 1)`, or `(1, k)` when transposed.
    pub fn mat2_strides(&self) -> (usize, usize) {
        if self.transpose_right {
            (1, self.k)
        } else {
            (self.n, 1)
        }
    }
    /// `(m, k, n)` padded lengths.
    pub fn padded_lengths(&self) -> (usize, usize, usize) {
        let a = self.dtype.align_size();
        (
            padded_length(self.m, a),
            padded_length(self.k, a),
            padded_length(self.n, a),
        )
    }
    /// PyTorch's `mat1_pre_padded` (`should_exclude_padding_time`): computed and contiguous.
    pub fn mat1_pre_padded(&self) -> bool {
        let (s0, s1) = self.mat1_strides();
        self.prepadded_left && is_contiguous(self.m, self.k, s0, s1)
    }
    /// mat1's padding is outside the timed `pad` choice: pre-padded (PyTorch's flag) or fused
    /// into its producer ([`Self::fuse_mat1_pad`]).
    pub fn mat1_padding_excluded(&self) -> bool {
        self.mat1_pre_padded() || self.fuse_mat1_pad
    }
    /// PyTorch's `mat2_pre_padded`.
    pub fn mat2_pre_padded(&self) -> bool {
        let (s0, s1) = self.mat2_strides();
        self.prepadded_right && is_contiguous(self.k, self.n, s0, s1)
    }
    /// Some dimension is unaligned for the dtype: PyTorch's pad_mm considers only such inputs.
    pub fn needs_padding(&self) -> bool {
        self.padded_lengths() != (0, 0, 0)
    }
    /// The value of the `using_tf32` feature.
    pub fn using_tf32(&self) -> ah_core::Value {
        if self.dtype == DType::F32 {
            self.allow_tf32.into()
        } else {
            "not_float_32".into()
        }
    }
}

/// PyTorch's `fits_in_memory`: the three operands take less than a quarter of the device.
pub fn fits_in_memory(dtype: DType, m: usize, k: usize, n: usize, total_memory: u64) -> bool {
    let bytes = dtype.itemsize() as f64 * (m * k + k * n + m * n) as f64;
    bytes < total_memory as f64 / 4.0
}

/// Probability of the real-model branch per sample under [`ShapeDistribution::Mix`].
pub const MIX_REAL: f64 = 0.6;

/// The input distribution of the pad_mm runner (`--shapes`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShapeDistribution {
    /// PyTorch's random generator only (every log collected before `--shapes` existed).
    #[default]
    Pytorch,
    /// GEMMs of the catalogue's real models only.
    Real(Arc<Catalogue>),
    /// Per sample: real w.p. [`MIX_REAL`], else PyTorch's generator.
    Mix(Arc<Catalogue>),
}

impl ShapeDistribution {
    /// `pytorch`, `real` or `mix` (the `--shapes` value and the provenance's `shapes`).
    pub fn name(&self) -> &'static str {
        match self {
            ShapeDistribution::Pytorch => "pytorch",
            ShapeDistribution::Real(_) => "real",
            ShapeDistribution::Mix(_) => "mix",
        }
    }
    /// The catalogue, for `real` and `mix`.
    pub fn catalogue(&self) -> Option<&Catalogue> {
        match self {
            ShapeDistribution::Pytorch => None,
            ShapeDistribution::Real(c) | ShapeDistribution::Mix(c) => Some(c),
        }
    }
}

/// The pad_mm runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PadMmRunner {
    /// Largest power of two of a dimension on the GPU (PyTorch: 16, i.e. 65536); PyTorch's
    /// generator only (real-model shapes are the models').
    pub max_power2_gpu: u32,
    /// Largest power of two on the CPU (default 11: 2048, so 200 inputs take a minute or two on 2 cores).
    pub max_power2_cpu: u32,
    /// Where inputs come from (default: PyTorch's generator).
    pub shapes: ShapeDistribution,
}

impl Default for PadMmRunner {
    fn default() -> Self {
        Self {
            max_power2_gpu: 16,
            max_power2_cpu: 11,
            shapes: ShapeDistribution::Pytorch,
        }
    }
}

impl PadMmRunner {
    /// The same runner drawing from `shapes`.
    pub fn with_shapes(self, shapes: ShapeDistribution) -> Self {
        Self { shapes, ..self }
    }

    /// PyTorch's generator (the module documentation describes it).
    fn pytorch_input(&self, rng: &mut SampleRng, target: &Target) -> PadMmInput {
        let dtype = match target.kind {
            // Host GEMMs are fp32 only: the CPU dataset keeps PyTorch's columns with fp32.
            BackendKind::Cpu => DType::F32,
            BackendKind::Cuda => [DType::F16, DType::BF16, DType::F32][rng.random_range(0..3)],
        };
        // set_precision: fp32 "highest" w.p. 0.8, else "high" (TF32); other dtypes "high".
        let allow_tf32 = match (target.kind, dtype) {
            (BackendKind::Cpu, _) => false,
            (_, DType::F32) => !rng.random_bool(0.8),
            _ => true,
        };
        let max_p = self.max_power2(target.kind);
        let max_dim = 1usize << max_p;
        let uniform = rng.random_bool(0.5);
        let align = dtype.align_size();
        let (m, k, n) = loop {
            let (m, k, n) = if uniform {
                (
                    rng.random_range(1..=max_dim),
                    rng.random_range(1..=max_dim),
                    rng.random_range(1..=max_dim),
                )
            } else {
                (
                    Self::random_dim(rng, max_p),
                    Self::random_dim(rng, max_p),
                    Self::random_dim(rng, max_p),
                )
            };
            if [m, k, n].iter().all(|d| d % align == 0) {
                continue;
            }
            if fits_in_memory(dtype, m, k, n, target.total_memory) {
                break (m, k, n);
            }
        };
        let (transpose_left, transpose_right) = if rng.random_bool(0.05) {
            (true, true)
        } else {
            [(true, false), (false, true), (false, false)][rng.random_range(0..3)]
        };
        let prepadded_left = rng.random_bool(0.2);
        let prepadded_right = rng.random_bool(0.2);
        PadMmInput {
            m,
            k,
            n,
            dtype,
            allow_tf32,
            transpose_left,
            transpose_right,
            prepadded_left,
            prepadded_right,
            fuse_mat1_pad: false,
        }
    }

    fn max_power2(&self, kind: BackendKind) -> u32 {
        match kind {
            BackendKind::Cuda => self.max_power2_gpu,
            BackendKind::Cpu => self.max_power2_cpu,
        }
    }

    /// The PyTorch branch of `mix`: drawn again until the precondition holds, as the real
    /// branch is, so the branch (and its 0.6 share of the logged inputs) is fixed per sample.
    fn pytorch_input_meeting_precondition(
        &self,
        rng: &mut SampleRng,
        target: &Target,
    ) -> PadMmInput {
        (0..real_models::ATTEMPTS)
            .map(|_| self.pytorch_input(rng, target))
            .find(|i| precondition(target.identity, i.m, i.k, i.n))
            .unwrap_or(real_models::NOTHING)
    }

    fn random_dim(rng: &mut SampleRng, max_p: u32) -> usize {
        // get_random_dim: aligned w.p. 0.75 -> 2^randint(1, max); else between powers of two.
        if rng.random_bool(0.75) {
            1usize << rng.random_range(1..=max_p)
        } else {
            let i = rng.random_range(1..max_p.max(2));
            rng.random_range((1usize << i) + 1..=(1usize << (i + 1)) - 1)
        }
    }
}

/// Device buffers of one input on the GPU.
#[derive(Debug)]
pub struct CudaPrepared {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: DeviceBuffer,
    a_pad: Option<DeviceBuffer>,
    b_pad: Option<DeviceBuffer>,
    c_pad: DeviceBuffer,
    /// Row strides (elements) of `a_pad` and `b_pad`: `CudaBackend::padded_row_stride`.
    lda_pad: usize,
    ldb_pad: usize,
}

/// Host buffers of one input on the CPU.
#[derive(Debug)]
pub struct CpuPrepared {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    a_pad: Option<Vec<f32>>,
    b_pad: Option<Vec<f32>>,
    c_pad: Vec<f32>,
}

/// Per-input state of the pad_mm runner.
#[derive(Debug)]
pub enum PadMmPrepared {
    /// On a GPU.
    Cuda(CudaPrepared),
    /// On the CPU.
    Cpu(CpuPrepared),
}

/// Shapes derived from an input.
#[derive(Debug, Clone, Copy)]
struct Shapes {
    mp: usize,
    kp: usize,
    np: usize,
    pad1: bool,
    pad2: bool,
}

fn shapes(i: &PadMmInput) -> Shapes {
    let (mpad, kpad, npad) = i.padded_lengths();
    Shapes {
        mp: i.m + mpad,
        kp: i.k + kpad,
        np: i.n + npad,
        pad1: mpad != 0 || kpad != 0,
        pad2: kpad != 0 || npad != 0,
    }
}

/// The rectangle PyTorch's `write_pad` zeroes: `mat[-rp:, -cp:]`, where a zero length means
/// the whole dimension (`[-0:]` is `[0:]`). Returns (first row, first col, rows, cols).
fn write_pad_rect(rows: usize, cols: usize, rp: usize, cp: usize) -> (usize, usize, usize, usize) {
    let (r0, nr) = if rp == 0 { (0, rows) } else { (rows - rp, rp) };
    let (c0, nc) = if cp == 0 { (0, cols) } else { (cols - cp, cp) };
    (r0, c0, nr, nc)
}

impl BenchmarkRunner for PadMmRunner {
    type Input = PadMmInput;
    type Prepared = PadMmPrepared;

    fn name(&self) -> &'static str {
        "pad_mm"
    }

    fn description(&self) -> &'static str {
        "pad a matmul's unaligned dims (cuBLAS GEMM vs pad + GEMM on padded shapes); PyTorch's pad_mm features"
    }

    fn choices(&self) -> Vec<String> {
        vec!["orig".into(), "pad".into()]
    }

    fn supports(&self, _kind: BackendKind) -> bool {
        true
    }

    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> PadMmInput {
        match &self.shapes {
            ShapeDistribution::Pytorch => self.pytorch_input(rng, target),
            ShapeDistribution::Real(c) => real_models::draw(rng, c, target),
            ShapeDistribution::Mix(c) if rng.random_bool(MIX_REAL) => {
                real_models::draw(rng, c, target)
            }
            ShapeDistribution::Mix(_) => self.pytorch_input_meeting_precondition(rng, target),
        }
    }

    fn input_distribution(&self) -> Option<InputDistribution> {
        Some(InputDistribution {
            shapes: self.shapes.name(),
            catalogue_sha256: self.shapes.catalogue().map(|c| c.sha256.clone()),
            // Versions of the draws' timing (a resume across versions is refused):
            // - pytorch 3, real and mix 4: padded operands get Inductor's row strides
            //   (`CudaBackend::padded_row_stride`), as a compiled program allocates them; cuBLAS
            //   ran up to 1.7x faster on them than on packed rows;
            // - pytorch 2, real and mix 3: a transposed operand is copied into its padded
            //   buffer by a tiled transpose, as a compiled program's copy costs (the strided
            //   gather before cost up to 3x more, as eager PyTorch's constant_pad_nd does);
            // - real and mix 2: grad-weight GEMMs time `pad` with mat1's padding fused
            //   (`PadMmInput::fuse_mat1_pad`); version 1 timed its copy.
            version: if self.shapes.catalogue().is_some() {
                4
            } else {
                3
            },
        })
    }

    fn context(&self, i: &PadMmInput) -> Context {
        let (s10, s11) = i.mat1_strides();
        let (s20, s21) = i.mat2_strides();
        let (mp, kp, np) = i.padded_lengths();
        let mut c = Context::with_capacity(17);
        c.add("m", i.m).add("k", i.k).add("n", i.n);
        c.add("mat1_stride_0", s10).add("mat1_stride_1", s11);
        c.add("mat2_stride_0", s20).add("mat2_stride_1", s21);
        c.add("m_padded_length", mp)
            .add("k_padded_length", kp)
            .add("n_padded_length", np);
        c.add("mat1_align_size", i.dtype.align_size());
        c.add("mat2_align_size", i.dtype.align_size());
        c.add_categorical("mat1_dtype", i.dtype.torch_name());
        c.add_categorical("mat2_dtype", i.dtype.torch_name());
        c.add_categorical("prepadded_mat1", i.mat1_pre_padded());
        c.add_categorical("prepadded_mat2", i.mat2_pre_padded());
        c.add_categorical("using_tf32", i.using_tf32());
        c
    }

    fn precondition(&self, device: DeviceIdentity, i: &PadMmInput) -> bool {
        // PyTorch's pad_mm sees only inputs that need padding; the generators draw no others,
        // but an exhausted real-model draw may (real_models::ATTEMPTS).
        precondition(device, i.m, i.k, i.n) && i.needs_padding()
    }

    fn prepare(&self, i: &PadMmInput, backend: &mut Backend) -> Result<PadMmPrepared, BenchError> {
        match backend {
            Backend::Cuda(cuda) => prepare_cuda(i, cuda).map(PadMmPrepared::Cuda),
            Backend::Cpu(_) => prepare_cpu(i).map(PadMmPrepared::Cpu),
        }
    }

    fn run(
        &self,
        i: &PadMmInput,
        prepared: &mut PadMmPrepared,
        choice: &str,
        warmup: bool,
        backend: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        let pad = match choice {
            "orig" => false,
            "pad" => true,
            other => return Err(BenchError::Other(format!("pad_mm has no choice `{other}`"))),
        };
        match (backend, prepared) {
            (Backend::Cuda(cuda), PadMmPrepared::Cuda(p)) => {
                let p = &*p;
                cuda.bench(warmup, &mut |c| {
                    if pad {
                        enqueue_pad(c, i, p)
                    } else {
                        enqueue_orig(c, i, p)
                    }
                })
            }
            (Backend::Cpu(cpu), PadMmPrepared::Cpu(p)) => cpu.bench(warmup, &mut || {
                if pad {
                    cpu_pad(i, p)
                } else {
                    cpu_orig(i, p)
                }
                Ok(())
            }),
            _ => Err(BenchError::Other("prepared on another backend".into())),
        }
    }
}

/// PyTorch's `pad_mm_precondition`: A100 needs all dims >= 512, H100/H200 >= 768, other
/// devices (and the CPU) always pass.
pub fn precondition(device: DeviceIdentity, m: usize, k: usize, n: usize) -> bool {
    let min = |x: usize| m >= x && k >= x && n >= x;
    if device == DeviceIdentity::A100 {
        min(512)
    } else if device == DeviceIdentity::H100 {
        min(768)
    } else {
        true
    }
}

fn prepare_cuda(
    i: &PadMmInput,
    cuda: &mut crate::backend::CudaBackend,
) -> Result<CudaPrepared, BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let a = cuda.alloc(i.m * i.k * e)?;
    let b = cuda.alloc(i.k * i.n * e)?;
    let c = cuda.alloc(i.m * i.n * e)?;
    cuda.fill_random(a.ptr(), i.m * i.k, i.dtype)?;
    cuda.fill_random(b.ptr(), i.k * i.n, i.dtype)?;
    let (lda_pad, ldb_pad) = (
        cuda.padded_row_stride(s.kp, e),
        cuda.padded_row_stride(s.np, e),
    );
    let a_pad = if s.pad1 {
        Some(cuda.alloc(s.mp * lda_pad * e)?)
    } else {
        None
    };
    let b_pad = if s.pad2 {
        Some(cuda.alloc(s.kp * ldb_pad * e)?)
    } else {
        None
    };
    let c_pad = cuda.alloc(s.mp * s.np * e)?;
    // Prepadded operands exist padded before the timed region (PyTorch pads them up front).
    if let (true, Some(ap)) = (i.mat1_padding_excluded(), &a_pad) {
        let (s0, s1) = i.mat1_strides();
        cuda.zero(ap.ptr(), ap.bytes())?;
        cuda.copy2d(ap.ptr(), a.ptr(), i.m, i.k, s0, s1, lda_pad, e)?;
    }
    if let (true, Some(bp)) = (i.mat2_pre_padded(), &b_pad) {
        let (s0, s1) = i.mat2_strides();
        cuda.zero(bp.ptr(), bp.bytes())?;
        cuda.copy2d(bp.ptr(), b.ptr(), i.k, i.n, s0, s1, ldb_pad, e)?;
    }
    cuda.synchronize()?;
    Ok(CudaPrepared {
        a,
        b,
        c,
        a_pad,
        b_pad,
        c_pad,
        lda_pad,
        ldb_pad,
    })
}

fn orig_gemm(i: &PadMmInput, p: &CudaPrepared) -> GemmArgs {
    GemmArgs {
        m: i.m,
        k: i.k,
        n: i.n,
        a: p.a.ptr(),
        trans_a: i.transpose_left,
        lda: if i.transpose_left { i.m } else { i.k },
        b: p.b.ptr(),
        trans_b: i.transpose_right,
        ldb: if i.transpose_right { i.k } else { i.n },
        c: p.c.ptr(),
        ldc: i.n,
        dtype: i.dtype,
        tf32: i.allow_tf32,
    }
}

fn enqueue_orig(
    cuda: &mut crate::backend::CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    cuda.gemm(&orig_gemm(i, p))
}

fn enqueue_pad(
    cuda: &mut crate::backend::CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let (mpad, kpad, npad) = i.padded_lengths();
    let mut g = orig_gemm(i, p);
    if let Some(ap) = &p.a_pad {
        if i.mat1_padding_excluded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.mp, s.kp, mpad, kpad);
            cuda.zero_rect(
                ap.ptr() + ((r0 * p.lda_pad + c0) * e) as u64,
                p.lda_pad * e,
                e,
                nc,
                nr,
            )?;
        } else {
            let (s0, s1) = i.mat1_strides();
            cuda.zero(ap.ptr(), ap.bytes())?;
            cuda.copy2d(ap.ptr(), p.a.ptr(), i.m, i.k, s0, s1, p.lda_pad, e)?;
        }
        g.a = ap.ptr();
        g.trans_a = false;
        g.lda = p.lda_pad;
    }
    if let Some(bp) = &p.b_pad {
        if i.mat2_pre_padded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.kp, s.np, kpad, npad);
            cuda.zero_rect(
                bp.ptr() + ((r0 * p.ldb_pad + c0) * e) as u64,
                p.ldb_pad * e,
                e,
                nc,
                nr,
            )?;
        } else {
            let (s0, s1) = i.mat2_strides();
            cuda.zero(bp.ptr(), bp.bytes())?;
            cuda.copy2d(bp.ptr(), p.b.ptr(), i.k, i.n, s0, s1, p.ldb_pad, e)?;
        }
        g.b = bp.ptr();
        g.trans_b = false;
        g.ldb = p.ldb_pad;
    }
    g.m = s.mp;
    g.k = if s.pad1 || s.pad2 { s.kp } else { i.k };
    g.n = s.np;
    g.c = p.c_pad.ptr();
    g.ldc = s.np;
    cuda.gemm(&g)
}

fn cpu_fill(v: &mut [f32], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for e in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *e = ((x >> 40) as f32) * (2.0 / 16_777_216.0) - 1.0;
    }
}

fn prepare_cpu(i: &PadMmInput) -> Result<CpuPrepared, BenchError> {
    if i.dtype != DType::F32 {
        return Err(BenchError::Unsupported(format!(
            "CPU pad_mm runs fp32 only, not {}",
            i.dtype.torch_name()
        )));
    }
    let s = shapes(i);
    let mut a = vec![0f32; i.m * i.k];
    let mut b = vec![0f32; i.k * i.n];
    cpu_fill(&mut a, (i.m * 31 + i.k) as u64);
    cpu_fill(&mut b, (i.k * 37 + i.n) as u64);
    let mut p = CpuPrepared {
        a,
        b,
        c: vec![0f32; i.m * i.n],
        a_pad: s.pad1.then(|| vec![0f32; s.mp * s.kp]),
        b_pad: s.pad2.then(|| vec![0f32; s.kp * s.np]),
        c_pad: vec![0f32; s.mp * s.np],
    };
    if i.mat1_padding_excluded() {
        if let Some(ap) = p.a_pad.as_mut() {
            host_pad_copy(ap, &p.a, i.m, i.k, i.mat1_strides(), s.kp);
        }
    }
    if i.mat2_pre_padded() {
        if let Some(bp) = p.b_pad.as_mut() {
            host_pad_copy(bp, &p.b, i.k, i.n, i.mat2_strides(), s.np);
        }
    }
    Ok(p)
}

/// constant_pad_nd on the host: zero the destination, copy the strided source in.
fn host_pad_copy(
    dst: &mut [f32],
    src: &[f32],
    rows: usize,
    cols: usize,
    (s0, s1): (usize, usize),
    dst_cols: usize,
) {
    dst.fill(0.0);
    for r in 0..rows {
        let d = &mut dst[r * dst_cols..r * dst_cols + cols];
        if s1 == 1 {
            d.copy_from_slice(&src[r * s0..r * s0 + cols]);
        } else {
            for (c, x) in d.iter_mut().enumerate() {
                *x = src[r * s0 + c * s1];
            }
        }
    }
}

fn cpu_orig(i: &PadMmInput, p: &mut CpuPrepared) {
    sgemm(
        i.m,
        i.k,
        i.n,
        &p.a,
        i.mat1_strides(),
        &p.b,
        i.mat2_strides(),
        &mut p.c,
        i.n,
    );
}

fn cpu_pad(i: &PadMmInput, p: &mut CpuPrepared) {
    let s = shapes(i);
    let (mpad, kpad, npad) = i.padded_lengths();
    if let Some(ap) = p.a_pad.as_mut() {
        if i.mat1_padding_excluded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.mp, s.kp, mpad, kpad);
            for r in r0..r0 + nr {
                ap[r * s.kp + c0..r * s.kp + c0 + nc].fill(0.0);
            }
        } else {
            host_pad_copy(ap, &p.a, i.m, i.k, i.mat1_strides(), s.kp);
        }
    }
    if let Some(bp) = p.b_pad.as_mut() {
        if i.mat2_pre_padded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.kp, s.np, kpad, npad);
            for r in r0..r0 + nr {
                bp[r * s.np + c0..r * s.np + c0 + nc].fill(0.0);
            }
        } else {
            host_pad_copy(bp, &p.b, i.k, i.n, i.mat2_strides(), s.np);
        }
    }
    let (a, a_strides) = match &p.a_pad {
        Some(ap) => (ap.as_slice(), (s.kp, 1)),
        None => (p.a.as_slice(), i.mat1_strides()),
    };
    let (b, b_strides) = match &p.b_pad {
        Some(bp) => (bp.as_slice(), (s.np, 1)),
        None => (p.b.as_slice(), i.mat2_strides()),
    };
    let k = if s.pad1 || s.pad2 { s.kp } else { i.k };
    sgemm(
        s.mp,
        k,
        s.np,
        a,
        a_strides,
        b,
        b_strides,
        &mut p.c_pad,
        s.np,
    );
}

/// Result of [`check_pad_equals_orig`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckResult {
    /// `max |orig - reference| / max |reference|`, reference computed in f64 on the host.
    pub orig_vs_reference: f64,
    /// `max |pad[:m, :n] - orig| / max |orig|`.
    pub pad_vs_orig: f64,
}

/// Runs `orig` and `pad` once each on the GPU and compares both with a host f64 reference:
/// proves the layouts, transposes, padding and slicing are right. Use small shapes.
pub fn check_pad_equals_orig(
    i: &PadMmInput,
    cuda: &mut crate::backend::CudaBackend,
) -> Result<CheckResult, BenchError> {
    let p = prepare_cuda(i, cuda)?;
    enqueue_orig(cuda, i, &p)?;
    enqueue_pad(cuda, i, &p)?;
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let a = crate::dtype::decode(&cuda.download(p.a.ptr(), p.a.bytes())?, i.dtype);
    let b = crate::dtype::decode(&cuda.download(p.b.ptr(), p.b.bytes())?, i.dtype);
    let c = crate::dtype::decode(&cuda.download(p.c.ptr(), i.m * i.n * e)?, i.dtype);
    let cp = crate::dtype::decode(&cuda.download(p.c_pad.ptr(), s.mp * s.np * e)?, i.dtype);
    let (a0, a1) = i.mat1_strides();
    let (b0, b1) = i.mat2_strides();
    let (mut ref_max, mut err_ref, mut orig_max, mut err_pad) = (0f64, 0f64, 0f64, 0f64);
    for r in 0..i.m {
        for col in 0..i.n {
            let mut acc = 0f64;
            for t in 0..i.k {
                acc += f64::from(a[r * a0 + t * a1]) * f64::from(b[t * b0 + col * b1]);
            }
            let o = f64::from(c[r * i.n + col]);
            let q = f64::from(cp[r * s.np + col]);
            ref_max = ref_max.max(acc.abs());
            orig_max = orig_max.max(o.abs());
            err_ref = err_ref.max((o - acc).abs());
            err_pad = err_pad.max((q - o).abs());
            if !o.is_finite() || !q.is_finite() {
                return Err(BenchError::Other(format!(
                    "non-finite result at ({r}, {col})"
                )));
            }
        }
    }
    Ok(CheckResult {
        orig_vs_reference: err_ref / ref_max.max(f64::MIN_POSITIVE),
        pad_vs_orig: err_pad / orig_max.max(f64::MIN_POSITIVE),
    })
}

/// Tolerance of [`CheckResult`] values per dtype (TF32 and half types round the inputs).
pub fn check_tolerance(i: &PadMmInput) -> f64 {
    match (i.dtype, i.allow_tf32) {
        (DType::F32, false) => 1e-4,
        (DType::F32, true) => 5e-3,
        (DType::F16, _) => 1e-2,
        (DType::BF16, _) => 3e-2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    use crate::runners::test_target as target;

    #[test]
    fn padded_length_is_pytorchs() {
        assert_eq!(padded_length(1, 8), 0);
        assert_eq!(padded_length(16, 8), 0);
        assert_eq!(padded_length(17, 8), 7);
        assert_eq!(padded_length(2174, 8), 2);
        assert_eq!(padded_length(5, 0), 0);
        assert_eq!(padded_length(41523, 8), 5);
    }

    #[test]
    fn context_matches_pytorch_columns_and_values() {
        // The first row of PyTorch's public pad_mm_a100 log:
        // 29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32
        let i = PadMmInput {
            m: 29088,
            k: 41523,
            n: 5535,
            dtype: DType::BF16,
            allow_tf32: true,
            transpose_left: true,
            transpose_right: false,
            prepadded_left: false,
            prepadded_right: true,
            fuse_mat1_pad: false,
        };
        let c = PadMmRunner::default().context(&i);
        assert_eq!(
            c.feature_names_csv(),
            "m,k,n,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,m_padded_length,k_padded_length,n_padded_length,mat1_align_size,mat2_align_size,mat1_dtype,mat2_dtype,prepadded_mat1,prepadded_mat2,using_tf32"
        );
        assert_eq!(
            c.feature_values_csv(),
            "29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32"
        );
        let (num, cat) = c.numerical_and_categorical();
        assert_eq!(num.len(), 12);
        assert_eq!(
            cat,
            [
                "mat1_dtype",
                "mat2_dtype",
                "prepadded_mat1",
                "prepadded_mat2",
                "using_tf32"
            ]
        );
        let f32_input = PadMmInput {
            dtype: DType::F32,
            allow_tf32: false,
            ..i
        };
        assert_eq!(
            PadMmRunner::default().context(&f32_input).get("using_tf32"),
            Some(&false.into())
        );
    }

    #[test]
    fn transposed_operands_are_never_prepadded() {
        let i = PadMmInput {
            m: 100,
            k: 30,
            n: 7,
            dtype: DType::F16,
            allow_tf32: true,
            transpose_left: true,
            transpose_right: true,
            prepadded_left: true,
            prepadded_right: true,
            fuse_mat1_pad: false,
        };
        assert!(!i.mat1_pre_padded() && !i.mat2_pre_padded());
        let j = PadMmInput {
            transpose_left: false,
            transpose_right: false,
            ..i
        };
        assert!(j.mat1_pre_padded() && j.mat2_pre_padded());
        assert!(
            is_contiguous(1, 5, 1, 1) && is_contiguous(5, 1, 1, 5) && !is_contiguous(5, 3, 1, 5)
        );
    }

    #[test]
    fn generator_follows_pytorchs_distribution() {
        let r = PadMmRunner::default();
        let t = target(BackendKind::Cuda, DeviceIdentity::H100);
        let mut counts = std::collections::BTreeMap::new();
        let n = 4000;
        for s in 0..n {
            let mut rng = SampleRng::seed_from_u64(s);
            let i = r.create_input(&mut rng, &t);
            let a = i.dtype.align_size();
            assert!(
                !(i.m % a == 0 && i.k % a == 0 && i.n % a == 0),
                "all aligned: {i:?}"
            );
            assert!((1..=65536).contains(&i.m) && (1..=65536).contains(&i.k));
            assert!(i.dtype.itemsize() * (i.m * i.k + i.k * i.n + i.m * i.n) < (80usize << 30) / 4);
            *counts.entry(format!("{:?}", i.dtype)).or_insert(0) += 1;
            *counts
                .entry(format!(
                    "t{}{}",
                    i.transpose_left as u8, i.transpose_right as u8
                ))
                .or_insert(0) += 1;
            if i.prepadded_left {
                *counts.entry("pl".to_string()).or_insert(0) += 1;
            }
            if i.dtype == DType::F32 && i.allow_tf32 {
                *counts.entry("tf32".to_string()).or_insert(0) += 1;
            }
        }
        let frac = |k: &str| f64::from(counts.get(k).copied().unwrap_or(0)) / n as f64;
        assert!((frac("F16") - 1.0 / 3.0).abs() < 0.04, "{counts:?}");
        assert!((frac("t11") - 0.05).abs() < 0.02, "{counts:?}");
        assert!((frac("t00") - 0.95 / 3.0).abs() < 0.04, "{counts:?}");
        assert!((frac("pl") - 0.2).abs() < 0.03, "{counts:?}");
        assert!(
            (frac("tf32") / frac("F32") - 0.2).abs() < 0.05,
            "{counts:?}"
        );
    }

    #[test]
    fn precondition_is_pytorchs() {
        assert!(!precondition(DeviceIdentity::H100, 767, 1000, 1000));
        assert!(precondition(DeviceIdentity::H100, 768, 768, 769));
        assert!(!precondition(DeviceIdentity::A100, 511, 600, 600));
        assert!(precondition(DeviceIdentity::NONE, 3, 5, 7));
    }

    #[test]
    fn write_pad_rect_follows_negative_zero_slicing() {
        assert_eq!(write_pad_rect(10, 8, 2, 3), (8, 5, 2, 3));
        assert_eq!(write_pad_rect(10, 8, 0, 3), (0, 5, 10, 3));
        assert_eq!(write_pad_rect(10, 8, 2, 0), (8, 0, 2, 8));
    }

    #[test]
    fn cpu_pad_and_orig_agree_for_every_layout() {
        let r = PadMmRunner::default();
        for (tl, tr, pl, pr) in [
            (false, false, false, false),
            (true, false, false, true),
            (false, true, true, false),
            (true, true, false, false),
            (false, false, true, true),
        ] {
            let i = PadMmInput {
                m: 13,
                k: 10,
                n: 7,
                dtype: DType::F32,
                allow_tf32: false,
                transpose_left: tl,
                transpose_right: tr,
                prepadded_left: pl,
                prepadded_right: pr,
                fuse_mat1_pad: false,
            };
            let mut p = prepare_cpu(&i).unwrap();
            cpu_orig(&i, &mut p);
            // Dirty the padded buffers' padding to prove the pad path zeroes it.
            if let Some(ap) = p.a_pad.as_mut() {
                if !i.mat1_pre_padded() {
                    ap.fill(7.0);
                }
            }
            cpu_pad(&i, &mut p);
            let s = shapes(&i);
            let (a0, a1) = i.mat1_strides();
            let (b0, b1) = i.mat2_strides();
            for row in 0..i.m {
                for col in 0..i.n {
                    let want: f32 = (0..i.k)
                        .map(|t| p.a[row * a0 + t * a1] * p.b[t * b0 + col * b1])
                        .sum();
                    assert!((p.c[row * i.n + col] - want).abs() < 1e-4, "orig {i:?}");
                    assert!((p.c_pad[row * s.np + col] - want).abs() < 1e-4, "pad {i:?}");
                }
            }
            assert_eq!(r.context(&i).len(), 17);
        }
    }
}
