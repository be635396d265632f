//! How Inductor sizes a Triton `mm` config to a GEMM, and what that makes of a kept list.
//!
//! Inductor does not offer a small GEMM the configs it offers a large one: before it makes
//! the choices of the `mm` template (and of `bmm`, whose configs are `mm`'s), it clamps each
//! config's blocks to the GEMM (`_scale_mm_configs` in PyTorch 2.11's
//! `torch/_inductor/template_heuristics/triton.py`) and then lowers its warps to what the
//! clamped tile can use (`_finalize_mm_configs`), dropping the configs that became
//! duplicates:
//!
//! - `BLOCK_M = max(min(BLOCK_M, max(next_power_of_2(m), 16)), 16)`, and alike `BLOCK_N` with
//!   `n` and `BLOCK_K` with `k` (`m`, `n`, `k` of one batch entry);
//! - `num_warps = min(num_warps, BLOCK_M * BLOCK_N / 256)`.
//!
//! A heuristic's kept config therefore means "the config Inductor sized from it for this
//! GEMM": keeping `BLOCK-M=64_..._numwarps=8` for a GEMM of 32 rows keeps the
//! `BLOCK-M=32_..._numwarps=4` choice that Inductor offers there. Without this, a list learned
//! on larger GEMMs of a leaf matched none of a small GEMM's choices and left it cuBLAS alone
//! (the worst miss of held-out set 6, docs/results.md). `sized_config` in
//! `python/ah_inductor/naming.py` is the same rule for the handler and the `mm` artifact; a
//! test checks the rule against every GEMM of the shipped logs.

use std::borrow::Cow;

/// The Triton template whose configs Inductor sizes (a `bmm` config reads as `mm` already,
/// `config_name` in `prune/data.rs`).
const SIZED_TEMPLATE: &str = "triton_mm";
/// Inductor's smallest block.
const MIN_BLOCK: i64 = 16;
/// Elements a warp covers of the output tile (a 16 x 16 tile).
const TILE_PER_WARP: i64 = 256;
/// The most digits of a config value read as a number (any fits in an `i64`).
const MAX_DIGITS: usize = 18;

/// The config Inductor offers a GEMM of `m` x `n` x `k` (one batch entry) for the config
/// `name`: `name` itself when it is no sized template's config or the GEMM is large enough.
pub fn sized_config(name: &str, m: i64, n: i64, k: i64) -> Cow<'_, str> {
    let Some(rest) = name
        .strip_prefix(SIZED_TEMPLATE)
        .and_then(|r| r.strip_prefix('_'))
    else {
        return Cow::Borrowed(name);
    };
    let Some(mut values) = config_values(rest) else {
        return Cow::Borrowed(name);
    };
    let value =
        |values: &[(&str, i64)], key: &str| values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v);
    let (Some(bm), Some(bn), Some(bk)) = (
        value(&values, "BLOCK-M"),
        value(&values, "BLOCK-N"),
        value(&values, "BLOCK-K"),
    ) else {
        return Cow::Borrowed(name);
    };
    let (bm, bn, bk) = (clamp(bm, m), clamp(bn, n), clamp(bk, k));
    for (key, v) in values.iter_mut() {
        *v = match *key {
            "BLOCK-M" => bm,
            "BLOCK-N" => bn,
            "BLOCK-K" => bk,
            "numwarps" => (*v).min(bm.saturating_mul(bn) / TILE_PER_WARP),
            _ => *v,
        };
    }
    let parts: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let sized = format!("{SIZED_TEMPLATE}_{}", parts.join("_"));
    if sized == name {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(sized)
    }
}

/// Shared memory, in bytes, that the offered (sized) `triton_mm` config `name` asks for its
/// software pipeline, with operands of `a_bytes` and `b_bytes` per element: `num_stages` tiles
/// of each, `numstages * (BLOCK-M * BLOCK-K * a_bytes + BLOCK-K * BLOCK-N * b_bytes)`. `None` for
/// any other name.
///
/// Where it exceeds what a block may use on the device (the log's `shared_memory`), the config
/// mostly fails to run: in the shipped H100 logs none of the 43812 template benchmarks within
/// it failed, and 1824 of the 2802 beyond it did. `pipeline_bytes` in
/// `python/ah_inductor/naming.py` is the same rule for the handler and the `mm` artifact, which
/// leave a GEMM to Inductor's full list where every kept config is beyond it
/// ([`super::data::Samples::mark_unfit`] scores that).
pub fn pipeline_bytes(name: &str, a_bytes: i64, b_bytes: i64) -> Option<i64> {
    let rest = name.strip_prefix(SIZED_TEMPLATE)?.strip_prefix('_')?;
    let values = config_values(rest)?;
    let value = |key: &str| values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v);
    let (bm, bn, bk) = (value("BLOCK-M")?, value("BLOCK-N")?, value("BLOCK-K")?);
    let tiles = bm
        .checked_mul(bk)?
        .checked_mul(a_bytes)?
        .checked_add(bk.checked_mul(bn)?.checked_mul(b_bytes)?)?;
    value("numstages")?.checked_mul(tiles)
}

/// A config's `KEY=VALUE` parts, in order; `None` unless every value is 1 to 18 ASCII digits
/// and no key repeats (as `naming.py` reads them: a hostile name is left alone alike in Rust
/// and Python).
fn config_values(rest: &str) -> Option<Vec<(&str, i64)>> {
    let values: Vec<(&str, i64)> = rest
        .split('_')
        .map(|part| {
            let (key, value) = part.split_once('=')?;
            let digits = (1..=MAX_DIGITS).contains(&value.len())
                && value.bytes().all(|b| b.is_ascii_digit());
            Some((key, value.parse().ok().filter(|_| digits)?))
        })
        .collect::<Option<_>>()?;
    let repeats = (1..values.len()).any(|i| values[..i].iter().any(|(k, _)| *k == values[i].0));
    (!repeats).then_some(values)
}

/// A block clamped to a GEMM dimension as Inductor clamps it.
fn clamp(block: i64, dim: i64) -> i64 {
    let dim = next_power_of_2(dim).max(MIN_BLOCK);
    block.min(dim).max(MIN_BLOCK)
}

/// The smallest power of two at least `x` (1 for `x <= 1`).
fn next_power_of_2(x: i64) -> i64 {
    let x = u64::try_from(x.max(1)).unwrap_or(1);
    i64::try_from(x.next_power_of_two()).unwrap_or(i64::MAX)
}

/// For a GEMM of `m` x `n` x `k` whose choices are `names`: each name of `universe` whose
/// sized config Inductor offered it, with that choice's index.
pub fn sized_offers<'u>(
    universe: &'u [String],
    names: &[&str],
    (m, n, k): (i64, i64, i64),
) -> Vec<(&'u str, usize)> {
    universe
        .iter()
        .filter_map(|u| {
            let sized = sized_config(u, m, n, k);
            let i = names.iter().position(|n| *n == sized)?;
            Some((u.as_str(), i))
        })
        .collect()
}

/// Of two names that size to the same choice of a GEMM, the one a ranking credits: the larger
/// tile (blocks' product, then warps), then the first by name. A leaf ranked on GEMMs of
/// several sizes then names a config by what large GEMMs are offered, which sizes down to what
/// the small ones are.
pub fn representative<'a>(a: &'a str, b: &'a str) -> &'a str {
    let size = |name: &str| {
        let rest = name.strip_prefix(SIZED_TEMPLATE).unwrap_or(name);
        let values = config_values(rest.trim_start_matches('_')).unwrap_or_default();
        let get = |key: &str| {
            values
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(0, |&(_, v)| v)
        };
        (
            get("BLOCK-M") * get("BLOCK-N") * get("BLOCK-K"),
            get("numwarps"),
        )
    };
    match size(a).cmp(&size(b)) {
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
        std::cmp::Ordering::Equal => a.min(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=8_GROUP-M=8";

    #[test]
    fn a_large_gemm_is_offered_the_config_itself() {
        assert_eq!(sized_config(C, 4096, 4096, 4096), C);
        assert_eq!(sized_config(C, 64, 64, 32), C);
    }

    #[test]
    fn blocks_clamp_to_the_gemm_and_warps_to_the_tile() {
        // m = 1 -> BLOCK-M 16; n = 33 -> 64 stays; k = 20 -> 32 stays; warps 16*64/256 = 4.
        assert_eq!(
            sized_config(C, 1, 33, 20),
            "triton_mm_BLOCK-M=16_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=4_GROUP-M=8"
        );
        // n = 17 -> 32, k = 9 -> 16: warps 64*32/256 = 8 stays.
        assert_eq!(
            sized_config(C, 100, 17, 9),
            "triton_mm_BLOCK-M=64_BLOCK-K=16_BLOCK-N=32_numstages=5_numwarps=8_GROUP-M=8"
        );
        // 16 x 16: one warp.
        assert_eq!(
            sized_config(C, 3, 5, 4096),
            "triton_mm_BLOCK-M=16_BLOCK-K=32_BLOCK-N=16_numstages=5_numwarps=1_GROUP-M=8"
        );
    }

    #[test]
    fn other_names_are_left_alone() {
        for name in [
            "extern_mm",
            "subgraph_decompose_k_ksplit=2",
            "triton_mm_persistent_tma_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128",
            "triton_mm_BLOCK-M=64_BLOCK-K=x_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_numwarps=4",
            "triton_mm_BLOCK-M=-64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=+64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=1234567890123456789_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64",
            "t1",
        ] {
            assert_eq!(sized_config(name, 1, 1, 1), name);
        }
    }

    #[test]
    fn a_pipeline_holds_each_operands_tile_per_stage() {
        let c = "triton_mm_BLOCK-M=128_BLOCK-K=64_BLOCK-N=32_numstages=5_numwarps=8_GROUP-M=8";
        assert_eq!(
            pipeline_bytes(c, 4, 2),
            Some(5 * (128 * 64 * 4 + 64 * 32 * 2))
        );
        for name in [
            "extern_mm",
            "subgraph_decompose_k",
            "triton_mm_persistent_tma_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128_numstages=3",
            "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numwarps=4",
            "triton_mm_BLOCK-M=999999999999999999_BLOCK-K=999999999999999999_BLOCK-N=1_numstages=9",
        ] {
            assert_eq!(pipeline_bytes(name, 4, 4), None, "{name}");
        }
    }

    #[test]
    fn a_ranking_credits_the_larger_tile() {
        let small = "triton_mm_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=4_GROUP-M=8";
        assert_eq!(representative(small, C), C);
        assert_eq!(representative(C, small), C);
        assert_eq!(representative("b", "a"), "a");
    }
}
