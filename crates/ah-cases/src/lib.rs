//! The H100 case studies, over the collector's runners and the generated heuristics: the mm
//! ranking evaluation ([`mm_eval`], docs/cublaslt-mm-ranking.md) and the reduction multi-kernel
//! ([`reduction_eval`], docs/reduction.md). Their programs are this crate's examples
//! (`mm_rank_log`, `mm_ranking_eval`, `mm_select_replay`, `reduction_multi_kernel`).
//!
//! A crate of its own so that `ah-collect` does not depend on `generated/ah-heuristics`, which
//! sits downstream of it.

pub mod mm_eval;
pub mod reduction_eval;
