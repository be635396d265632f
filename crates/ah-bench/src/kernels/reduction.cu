// Row-wise reductions over a contiguous (rows x cols) tensor, compiled at run time with NVRTC.
//
// The element type is chosen when the module is compiled: `-DAH_DTYPE=0` float32, `1` float16,
// `2` bfloat16. Every kernel accumulates in float32. One block reduces one row (grid = rows).
//
// Two families, each instantiated for several block sizes:
// - persistent: the whole row is held on chip (ITEMS registers per thread) and read from device
//   memory once; softmax computes max, sum and the output from registers. Valid only when
//   cols <= BLOCK * ITEMS; the host picks the smallest power-of-two ITEMS that fits.
// - looped: the row is walked in chunks of BLOCK * UNROLL elements. Sum accumulates on the way;
//   softmax makes an online max/sum pass, then a second pass that reads the row again and writes.
//
// Kernel names (extern "C", so the host can load them by name):
//   {op}_persistent_{BLOCK}_{ITEMS}   {op}_looped_{BLOCK}
// with op = sum | softmax. sum writes `rows` values, softmax `rows * cols`, both in the element type.
//
// No headers: half and bfloat16 conversions are a few PTX instructions, so the source compiles
// with NVRTC alone.

#ifndef AH_DTYPE
#define AH_DTYPE 0
#endif

typedef unsigned short u16;

#if AH_DTYPE == 0
typedef float elem_t;
__device__ __forceinline__ float to_f32(elem_t v) { return v; }
__device__ __forceinline__ elem_t from_f32(float v) { return v; }
#elif AH_DTYPE == 1
typedef u16 elem_t;
__device__ __forceinline__ float to_f32(elem_t v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ elem_t from_f32(float f) {
    u16 v;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(f));
    return v;
}
#elif AH_DTYPE == 2
typedef u16 elem_t;
__device__ __forceinline__ float to_f32(elem_t v) {
    return __uint_as_float(((unsigned int)v) << 16);
}
__device__ __forceinline__ elem_t from_f32(float f) {
    u16 v;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v) : "f"(f));
    return v;
}
#else
#error "AH_DTYPE must be 0 (float32), 1 (float16) or 2 (bfloat16)"
#endif

#define LOOP_UNROLL 4
#define NEG_INF (-__int_as_float(0x7f800000))

__device__ __forceinline__ float ld(const elem_t* p) { return to_f32(__ldg(p)); }

// --- block-wide reductions -------------------------------------------------------------------

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum over the block; every thread gets the result. `scratch` holds BLOCK / 32 floats.
template <int BLOCK>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    v = warp_sum(v);
    __syncthreads();  // scratch may still be read by a previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = lane < BLOCK / 32 ? scratch[lane] : 0.0f;
    return warp_sum(r);
}

template <int BLOCK>
__device__ __forceinline__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = lane < BLOCK / 32 ? scratch[lane] : NEG_INF;
    return warp_max(r);
}

// Online-softmax state (running max m, sum s of exp(x - m)) and its merge.
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    if (mm == NEG_INF) {  // both empty
        s = 0.0f;
        return;
    }
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

template <int BLOCK>
__device__ __forceinline__ void block_online(float& m, float& s, float* sm, float* ss) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        online_merge(m, s, m2, s2);
    }
    __syncthreads();
    if (lane == 0) {
        sm[warp] = m;
        ss[warp] = s;
    }
    __syncthreads();
    m = lane < BLOCK / 32 ? sm[lane] : NEG_INF;
    s = lane < BLOCK / 32 ? ss[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        online_merge(m, s, m2, s2);
    }
}

// --- persistent: the row in registers, one read -----------------------------------------------

template <int BLOCK, int ITEMS>
__device__ __forceinline__ void sum_persistent(const elem_t* __restrict__ x, elem_t* __restrict__ y,
                                               int cols) {
    __shared__ float scratch[BLOCK / 32];
    const elem_t* row = x + (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        v[i] = c < cols ? ld(row + c) : 0.0f;
    }
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) acc += v[i];
    acc = block_sum<BLOCK>(acc, scratch);
    if (threadIdx.x == 0) y[blockIdx.x] = from_f32(acc);
}

template <int BLOCK, int ITEMS>
__device__ __forceinline__ void softmax_persistent(const elem_t* __restrict__ x,
                                                   elem_t* __restrict__ y, int cols) {
    __shared__ float scratch[BLOCK / 32];
    const unsigned long long off = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    const elem_t* row = x + off;
    elem_t* out = y + off;
    float v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        v[i] = c < cols ? ld(row + c) : NEG_INF;
    }
    float m = NEG_INF;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) m = fmaxf(m, v[i]);
    m = block_max<BLOCK>(m, scratch);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        v[i] = __expf(v[i] - m);  // masked slots: exp(-inf) = 0
        s += v[i];
    }
    s = block_sum<BLOCK>(s, scratch);
    const float inv = 1.0f / s;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int c = threadIdx.x + i * BLOCK;
        if (c < cols) out[c] = from_f32(v[i] * inv);
    }
}

// --- looped: walk the row in chunks ------------------------------------------------------------

template <int BLOCK>
__device__ __forceinline__ void sum_looped(const elem_t* __restrict__ x, elem_t* __restrict__ y,
                                           int cols) {
    __shared__ float scratch[BLOCK / 32];
    const elem_t* row = x + (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float acc[LOOP_UNROLL];
#pragma unroll
    for (int u = 0; u < LOOP_UNROLL; ++u) acc[u] = 0.0f;
    for (int base = 0; base < cols; base += BLOCK * LOOP_UNROLL) {
#pragma unroll
        for (int u = 0; u < LOOP_UNROLL; ++u) {
            const int c = base + threadIdx.x + u * BLOCK;
            if (c < cols) acc[u] += ld(row + c);
        }
    }
    float total = 0.0f;
#pragma unroll
    for (int u = 0; u < LOOP_UNROLL; ++u) total += acc[u];
    total = block_sum<BLOCK>(total, scratch);
    if (threadIdx.x == 0) y[blockIdx.x] = from_f32(total);
}

template <int BLOCK>
__device__ __forceinline__ void softmax_looped(const elem_t* __restrict__ x,
                                               elem_t* __restrict__ y, int cols) {
    __shared__ float sm[BLOCK / 32];
    __shared__ float ss[BLOCK / 32];
    const unsigned long long off = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    const elem_t* row = x + off;
    elem_t* out = y + off;
    // Pass 1: online max and sum of exponentials.
    float m = NEG_INF, s = 0.0f;
    for (int base = 0; base < cols; base += BLOCK * LOOP_UNROLL) {
        float v[LOOP_UNROLL];
#pragma unroll
        for (int u = 0; u < LOOP_UNROLL; ++u) {
            const int c = base + threadIdx.x + u * BLOCK;
            v[u] = c < cols ? ld(row + c) : NEG_INF;
        }
#pragma unroll
        for (int u = 0; u < LOOP_UNROLL; ++u) {
            if (v[u] > m) {
                s = s * __expf(m - v[u]) + 1.0f;
                m = v[u];
            } else if (v[u] != NEG_INF) {
                s += __expf(v[u] - m);
            }
        }
    }
    block_online<BLOCK>(m, s, sm, ss);
    const float inv = 1.0f / s;
    // Pass 2: read again, write.
    for (int base = 0; base < cols; base += BLOCK * LOOP_UNROLL) {
#pragma unroll
        for (int u = 0; u < LOOP_UNROLL; ++u) {
            const int c = base + threadIdx.x + u * BLOCK;
            if (c < cols) out[c] = from_f32(__expf(ld(row + c) - m) * inv);
        }
    }
}

// --- instantiations ----------------------------------------------------------------------------

#define PERSISTENT(B, I)                                                                        \
    extern "C" __global__ void __launch_bounds__(B)                                             \
        sum_persistent_##B##_##I(const elem_t* __restrict__ x, elem_t* __restrict__ y, int c) { \
        sum_persistent<B, I>(x, y, c);                                                          \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(B) softmax_persistent_##B##_##I(               \
        const elem_t* __restrict__ x, elem_t* __restrict__ y, int c) {                          \
        softmax_persistent<B, I>(x, y, c);                                                      \
    }

#define LOOPED(B)                                                                               \
    extern "C" __global__ void __launch_bounds__(B)                                             \
        sum_looped_##B(const elem_t* __restrict__ x, elem_t* __restrict__ y, int c) {           \
        sum_looped<B>(x, y, c);                                                                 \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(B)                                             \
        softmax_looped_##B(const elem_t* __restrict__ x, elem_t* __restrict__ y, int c) {       \
        softmax_looped<B>(x, y, c);                                                             \
    }

// Items per thread: powers of two up to 128 (BLOCK 128), 64 (256), 32 (512), 16 (1024): every
// persistent variant holds rows of up to 16384 elements, so "the row fits" is one bound on cols
// for all of them. The host keeps the same table (`max_items` in kernels.rs).
PERSISTENT(128, 1) PERSISTENT(128, 2) PERSISTENT(128, 4) PERSISTENT(128, 8)
PERSISTENT(128, 16) PERSISTENT(128, 32) PERSISTENT(128, 64) PERSISTENT(128, 128)
PERSISTENT(256, 1) PERSISTENT(256, 2) PERSISTENT(256, 4) PERSISTENT(256, 8)
PERSISTENT(256, 16) PERSISTENT(256, 32) PERSISTENT(256, 64)
PERSISTENT(512, 1) PERSISTENT(512, 2) PERSISTENT(512, 4) PERSISTENT(512, 8)
PERSISTENT(512, 16) PERSISTENT(512, 32)
PERSISTENT(1024, 1) PERSISTENT(1024, 2) PERSISTENT(1024, 4) PERSISTENT(1024, 8)
PERSISTENT(1024, 16)

LOOPED(128) LOOPED(256) LOOPED(512) LOOPED(1024)
