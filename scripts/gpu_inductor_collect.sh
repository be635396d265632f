#!/usr/bin/env bash
# Collects (or resumes) the inductor_mm log on the lent GPU machine, stopping cleanly before
# the device tool's 10-minute limit. Run there from the repository root with the binary in .gpu/
# (.gpu/ah-collect, or packed as .gpu/ah-collect.xz or .gpu/ah-collect.gz when the working tree and
# the binary together pass the device tool's 64 MiB carry limit; it is unpacked first. The tracked
# tree alone reached 62 MiB in the twenty-ninth session, when the gzipped binary, 1.3 MiB, no
# longer travelled with it; xz packs it to 1.0 MiB: `xz -9e -k .gpu/ah-collect`. With finished
# logs' sidecars gzipped in data/ the tree is 42 MiB):
#   bash scripts/gpu_inductor_collect.sh SECONDS [ah-collect options...]
# At SECONDS ah-collect is asked to stop and finishes the GEMM it is measuring (killed 90 s
# later at most): give the device call a limit of SECONDS + 100, or it may be cut off first
# (a call of 530 s with SECONDS 470 was; its log stayed whole, docs/results.md).
# The log (data/$AH_INDUCTOR_LOG, default inductor_mm_h100.txt) and its sidecars are read from
# data/ (when present, to resume) and written to $OUT. The decode log:
#   AH_INDUCTOR_LOG=inductor_mm_decode_h100.txt bash scripts/gpu_inductor_collect.sh 530 \
#     --shapes decode --num-samples 400 --exclude data/inductor_mm_h100.txt
# and the attention log:
#   AH_INDUCTOR_LOG=inductor_mm_attention_h100.txt bash scripts/gpu_inductor_collect.sh 540 \
#     --shapes attention --num-samples 480 --exclude data/inductor_mm_h100.txt
# and attention over many tiny sets (molecules, graphs, points; 200 collected in two calls):
#   AH_INDUCTOR_LOG=inductor_mm_tiny_h100.txt bash scripts/gpu_inductor_collect.sh 540 \
#     --shapes tiny --num-samples 200
# and narrow layers over many tokens (weight gradients with a long k; 247 of 260 collected in
# five calls, the same draws as with 200 followed by more):
#   AH_INDUCTOR_LOG=inductor_mm_tokens_h100.txt bash scripts/gpu_inductor_collect.sh 480 \
#     --shapes tokens --num-samples 260
# and attention over many sets of 65-512 tokens (windows, time series; 135 collected so far):
#   AH_INDUCTOR_LOG=inductor_mm_windows_h100.txt bash scripts/gpu_inductor_collect.sh 480 \
#     --shapes windows --num-samples 200
# and attention with narrow heads over long sequences (200 collected in five calls):
#   AH_INDUCTOR_LOG=inductor_mm_heads_h100.txt bash scripts/gpu_inductor_collect.sh 480 \
#     --shapes heads --num-samples 200
# and batched products over a long axis into a small output (cross-attention of few queries,
# linear attention's state, per-block weight gradients; 200 collected in four calls):
#   AH_INDUCTOR_LOG=inductor_mm_pool_h100.txt bash scripts/gpu_inductor_collect.sh 480 \
#     --shapes pool --num-samples 200
# and linears with one wide and one narrow side (MoE routers, LoRA adapters, small heads; 44
# collected in the first call of 470 s):
#   AH_INDUCTOR_LOG=inductor_mm_adapters_h100.txt bash scripts/gpu_inductor_collect.sh 470 \
#     --shapes adapters --num-samples 200
# and attention at high resolution (few batch x heads over 4096-17776 tokens; 55 collected in
# two calls of 470 and 440 s, about 3.5 GEMMs a minute):
#   AH_INDUCTOR_LOG=inductor_mm_hires_h100.txt bash scripts/gpu_inductor_collect.sh 440 \
#     --shapes hires --num-samples 200
# and batched decode (forward linears over 65-256 sequences, bf16 and fp16; about 2.2 GEMMs a
# minute):
#   AH_INDUCTOR_LOG=inductor_mm_serving_h100.txt bash scripts/gpu_inductor_collect.sh 440 \
#     --shapes serving --num-samples 200
# and MoE routers and narrow heads (a hidden size to 1-64 outputs over 1-16384 tokens; not begun):
#   AH_INDUCTOR_LOG=inductor_mm_routers_h100.txt bash scripts/gpu_inductor_collect.sh 440 \
#     --shapes routers --num-samples 200
# Prices as users of the generated handler pay them (one ptxas, python/ah_inductor/ptxas.py): the
# same GEMMs as the first of the main log, in a log of their own (ah-collect refuses to resume a
# log measured in the other mode):
#   AH_INDUCTOR_PTXAS=align AH_INDUCTOR_LOG=inductor_mm_aligned_h100.txt \
#     bash scripts/gpu_inductor_collect.sh 540 --num-samples 600
set -uo pipefail
secs=${1:?seconds}; shift
log=${AH_INDUCTOR_LOG:-inductor_mm_h100.txt}
out=${OUT:?OUT is the folder whose files come back}
# A sidecar kept gzip-compressed in data/ (finished logs keep theirs so, docs/collection.md) is
# sent plain: ah-collect appends to the plain file and refuses one beside a .gz. The sidecars come
# back plain: put them in data/ in place of the .gz ones (gzip -9 -n them again once the log is
# finished).
for f in $log $log.medians.txt $log.provenance.json $log.extras.jsonl; do
  if [ -f "data/$f" ] && [ -f "data/$f.gz" ]; then
    echo "error: data/$f and data/$f.gz both exist: keep one of them" >&2
    exit 2
  elif [ -f "data/$f" ]; then
    cp "data/$f" "$out/"
  elif [ -f "data/$f.gz" ]; then
    gzip -dc "data/$f.gz" >"$out/$f"
  fi
done
if [ ! -x .gpu/ah-collect ] && [ -f .gpu/ah-collect.xz ]; then
  python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    .gpu/ah-collect.xz .gpu/ah-collect && chmod +x .gpu/ah-collect
elif [ ! -x .gpu/ah-collect ] && [ -f .gpu/ah-collect.gz ]; then
  gunzip -k .gpu/ah-collect.gz && chmod +x .gpu/ah-collect
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
# --foreground: one SIGINT to ah-collect alone (without it, timeout signals the child and then
# its whole process group, and a second SIGINT ends ah-collect at once, losing its summary).
timeout --foreground -s INT -k 90 "$secs" .gpu/ah-collect --name inductor_mm --device cuda --seed 1 \
  --out "$out/$log" "$@" 2>&1 | grep -v '^\s*$' | tail -n 60
rc=${PIPESTATUS[0]}
# timeout exits 124 when it stopped ah-collect at the limit (ah-collect's own 130 is not passed on).
case $rc in
  0) echo "exit: 0 (every sample measured)" ;;
  124) echo "exit: 124 (stopped cleanly at the ${secs} s limit: run the same command again to resume)" ;;
  *) echo "exit: $rc (an error: see the output above)" ;;
esac
# The lock is no data, and the device tool brings back a limited number of files: a call that
# also wrote evaluation files once lost the provenance sidecar, and with it the session's GEMMs.
rm -f "$out/$log.lock"
wc -l "$out/$log" "$out/$log.extras.jsonl" 2>/dev/null
