//! The generated decision path allocates nothing: a counting global allocator watches
//! `predict` and `decide` of every generated heuristic on contexts of the kinds PyTorch logs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ah_core::{Context, Decision, LearnedHeuristic, Value};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Contexts of pad_mm shapes in PyTorch's layout and kinds (ints, dtype strings, bools).
fn pad_mm_contexts() -> Vec<Context> {
    let mut out = Vec::new();
    for (i, (m, k, n)) in [
        (29088i64, 41523i64, 5535i64),
        (1024, 4095, 768),
        (8192, 8192, 8191),
        (513, 2048, 1000),
        (4097, 8191, 2049),
        (60000, 100, 30000),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = Context::new();
        let pad = |x: i64| if x % 8 == 0 { 0 } else { 8 - x % 8 };
        for (name, v) in [
            ("m", m),
            ("k", k),
            ("n", n),
            ("mat1_stride_0", if i % 2 == 0 { k } else { 1 }),
            ("mat1_stride_1", if i % 2 == 0 { 1 } else { m }),
            ("mat2_stride_0", n),
            ("mat2_stride_1", 1),
            ("m_padded_length", pad(m)),
            ("k_padded_length", pad(k)),
            ("n_padded_length", pad(n)),
            ("mat1_align_size", 8),
            ("mat2_align_size", 8),
        ] {
            c.add(name, Value::Int(v));
        }
        let dtype = ["torch.float16", "torch.bfloat16", "torch.float32"][i % 3];
        c.add_categorical("mat1_dtype", dtype)
            .add_categorical("mat2_dtype", dtype);
        c.add_categorical("prepadded_mat1", i % 4 == 1)
            .add_categorical("prepadded_mat2", false);
        if dtype == "torch.float32" {
            c.add_categorical("using_tf32", i % 2 == 0);
        } else {
            c.add_categorical("using_tf32", "not_float_32");
        }
        out.push(c);
    }
    out
}

#[test]
fn pad_mm_decisions_allocate_nothing() {
    let h: &dyn LearnedHeuristic = &ah_heuristics::pad_mma100::HEURISTIC;
    let contexts = pad_mm_contexts();
    let mut choices = 0;
    for ctx in &contexts {
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        let p = h.predict(ctx, None);
        let d = h.decide(ctx);
        let after = ALLOCATIONS.load(Ordering::SeqCst);
        // `decide` turns an unsure reason naming a feature into an owned `UnsureReason`
        // (a String): only those may allocate, and pad_mm contexts in range never hit them.
        assert_eq!(after - before, 0, "allocated on {ctx:?}: {p:?} {d:?}");
        choices += usize::from(matches!(d, Decision::Choice(_)));
    }
    assert!(choices > 0, "no decision among the contexts");
}
