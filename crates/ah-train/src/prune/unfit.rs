//! Kept lists that cannot run on a GEMM, as the generated handler treats them (`none_fit` in
//! `python/ah_inductor/naming.py`; `ah-prune --model-unfit` scores it).
//!
//! A Triton `mm` config's pipeline holds `num_stages` tiles of each operand in shared memory
//! ([`super::sizing::pipeline_bytes`]). Beyond what a block may use on the device (the log's
//! `shared_memory`) the config mostly fails to run, and a kept list of such configs alone leaves
//! cuBLAS alone: a list learned on 16-bit GEMMs reached by an fp32 one (Perceiver IO's
//! cross-attention scores, 2.10x; docs/results.md, thirty-second session). The handler leaves
//! such a GEMM to Inductor's full list; once marked, [`super::policy::Policy::outcome`] scores
//! it so.

use ah_codegen::prune_tree::DTYPE_BYTES;
use ah_core::Value;

use super::data::Samples;
use super::sizing;

impl Samples {
    /// Marks, on every GEMM (later ones included), each `triton_mm` config whose pipeline
    /// needs more than the log's `shared_memory` at the GEMM's operand widths. Nothing is
    /// marked for a log without `shared_memory` or dtype features.
    pub fn mark_unfit(&mut self) {
        let limit = i64::try_from(self.metadata.shared_memory).unwrap_or(i64::MAX);
        if limit == 0 {
            return;
        }
        let at = |name: &str| self.features.iter().position(|f| f == name);
        let (Some(a), Some(b)) = (at("mat1_dtype"), at("mat2_dtype")) else {
            return;
        };
        let bytes = |v: &Value| match v {
            Value::Str(d) => DTYPE_BYTES.iter().find(|(n, _)| n == d).map(|&(_, b)| b),
            _ => None,
        };
        for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
            let (Some(wa), Some(wb)) = (bytes(&s.values[a]), bytes(&s.values[b])) else {
                continue;
            };
            for c in s.choices_mut() {
                let need = sizing::pipeline_bytes(&c.name, wa, wb);
                c.set_unfit(need.is_some_and(|x| x > limit));
            }
        }
    }
}
