#!/usr/bin/env bash
# Trains the mm ranking heuristics from the H100 logs, generates the shipped one into the
# heuristics crate and evaluates both on the evaluation log (docs/cublaslt-mm-ranking.md). Needs no GPU:
#
#   cargo build --release -p ah-train -p ah-codegen -p ah-cases --examples && bash scripts/cublaslt_mm_train.sh
#
# - CublasLtRankingH100 (shipped): a re-ranking of cuBLASLt's candidate list. Choices are ranks in
#   that list (extern_mm = its first pick, lt2, lt3, ...: data/mm_h100_rank.txt, renamed from
#   data/mm_h100.txt by the mm_rank_log example), so the labels mean the same for every shape.
#   PyTorch's mm training (upstream rule, depth 5, min_samples_leaf 0.01, entropy, near-best
#   copies) with top 5 (8 rank classes: pruning at 10 would cut the tree to its root) and
#   PyTorch's unsafe-leaf rule at 10 % against extern_mm (data/mm_rank_config.json).
# - MMConfigRankingH100 (comparison, not generated): PyTorch's recipe on configuration ids
#   (top 10), exactly as the issue describes it.
set -euo pipefail

BIN=${BIN:-target/release}
OUT=${OUT:-out/mm}
mkdir -p "$OUT"
"$BIN/examples/mm_rank_log" data/mm_h100.txt "$OUT/mm_h100_rank.txt"
"$BIN/examples/mm_rank_log" data/mm_h100_eval.txt "$OUT/mm_h100_eval_rank.txt"
cmp "$OUT/mm_h100_rank.txt" data/mm_h100_rank.txt
cmp "$OUT/mm_h100_eval_rank.txt" data/mm_h100_eval_rank.txt
"$BIN/ah-train" data/mm_h100_rank.txt --heuristic-name CublasLtRankingH100 --ranking 5 --upstream \
    --config data/mm_rank_config.json --data eval data/mm_h100_eval_rank.txt \
    --output-dir "$OUT" --no-codegen -q
"$BIN/ah-codegen" "$OUT/CublasLtRankingH100.model.json"
"$BIN/ah-train" data/mm_h100.txt --heuristic-name MMConfigRankingH100 --ranking 10 --upstream \
    --data eval data/mm_h100_eval.txt --output-dir "$OUT" --no-codegen -q
"$BIN/examples/mm_ranking_eval" "$OUT/CublasLtRankingH100.model.json" data/mm_h100_eval_rank.txt \
    >"$OUT/eval_rank.md"
"$BIN/examples/mm_ranking_eval" "$OUT/MMConfigRankingH100.model.json" data/mm_h100_eval.txt \
    >"$OUT/eval_config.md"
"$BIN/examples/mm_select_replay" "$OUT/CublasLtRankingH100.model.json" data/mm_h100_eval_rank.txt \
    >"$OUT/replay_rank.md"
"$BIN/examples/mm_ranking_eval" "$OUT/CublasLtRankingH100.model.json" data/mm_h100_rank.txt \
    >"$OUT/train_rank.md"
echo "wrote $OUT/eval_rank.md $OUT/eval_config.md $OUT/replay_rank.md $OUT/train_rank.md"
