#!/usr/bin/env bash
# The GPU benchmark, for a machine with an NVIDIA GPU, the CUDA toolkit,
# cmake, ninja and Python 3.12 with torch (no LLVM/MLIR, no network):
#   benchmarks/gpu/run.sh [--dry-run] OUTDIR [ARTIFACT_DIR]
# ARTIFACT_DIR (default benchmarks/gpu/artifacts; benchmarks/gpu/artifacts-dry
# with --dry-run) comes from prepare.sh on the build machine, with the
# FlatBuffers headers the runtime builds with (ARTIFACT_DIR/include/
# flatbuffers: no Debian packages here). Builds the CUDA runtime from
# runtime/cuda, makes the weights from the seeded zoo (random BatchNorm
# statistics and biases too: gpuopt.randomize), then bench.py measures in
# order of importance, each stage under its own cap: correctness of every
# artifact against PyTorch, Rolling-UNet-S (gpuopt optimized, eager,
# torch.compile max-autotune, default), UNet, the rest and the ablations.
# Every row is appended to OUTDIR/results.jsonl as it is measured and
# OUTDIR/results.md rebuilt from it (roofline.png after each stage), so a run
# killed part-way returns what it measured; bench.log has the log (4 files).
# `python3 benchmarks/gpu/bench.py --render OUTDIR` re-renders after a kill.
#
# --dry-run (or BENCH_DRY_RUN=1): no GPU needed; the gpuopt rows run through
# the host emulation (gpuopt-cuda-run --emulate) of the same kind of
# artifacts (prepare.sh --dry-run: 32x32), PyTorch on the CPU with tiny run
# counts; everything else (JSONL, rendering, order, caps, budget) as on a GPU.
#
# Environment: BENCH_BUDGET_S (seconds for everything after the build;
# default 300 minus the build's time, at least 60), BENCH_WALL_S (default
# 300: the whole run's target), BENCH_BUILD_DIR (default
# /tmp/gpuopt-cuda-runtime, kept: a rerun on the same machine rebuilds
# nothing), BENCH_RUNTIME (a built gpuopt-cuda-run: no build),
# BENCH_AUTOTUNE_CAP_S / BENCH_COMPILE_CAP_S (torch.compile max-autotune /
# default rows, default 110 / 60), BENCH_STAGE_SCALE (multiplies the stage
# caps), BENCH_RUNS / BENCH_WARMUP / BENCH_PROFILE_PASSES (timed runs,
# untimed ones, gpuopt profiling passes per row: default 50 / 10 / 5, dry run
# 3 / 1 / 1), BENCH_STAGES (comma-separated subset of correctness,rolling_unet_s,
# unet,rest; default all: a rerun can take only the stages a first run did
# not reach), PYTHON (default python3), GPUOPT_COMMIT (recorded),
# GPUOPT_CUDNN_LIBRARY / GPUOPT_CUBLASLT_LIBRARY (the vendor libraries of
# Library steps; default: libcudnn.so.9 and libcublasLt.so.13/.12 found under
# the Python's site-packages/nvidia, i.e. PyTorch's wheel, and printed).
set -uo pipefail
DRY=${BENCH_DRY_RUN:-0}
case $DRY in
  0 | 1) ;;
  *) echo "run.sh: error: BENCH_DRY_RUN must be 0 or 1, got '$DRY'" >&2; exit 1 ;;
esac
if [ "${1:-}" = --dry-run ]; then
  DRY=1
  shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: benchmarks/gpu/run.sh [--dry-run] OUTDIR [ARTIFACT_DIR]" >&2
  exit 1
fi
START=$SECONDS
# Paths given are relative to the caller's directory.
OUT=$(realpath -m "$1")
if [ $DRY = 1 ]; then
  ART=$(realpath -m "${2:-$(dirname "$0")/artifacts-dry}")
else
  ART=$(realpath -m "${2:-$(dirname "$0")/artifacts}")
fi
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$OUT" || exit 1
PY=${PYTHON:-python3}
LOG=$OUT/bench.log
say() { echo "run.sh: $*" | tee -a "$LOG"; }
: > "$LOG"

number() {
  case $2 in
    '' | *[!0-9.]* | *.*.*) say "error: $1 must be a number of seconds, got '$2'"; exit 1 ;;
  esac
}
WALL=${BENCH_WALL_S:-300}
case $WALL in
  '' | *[!0-9]*) say "error: BENCH_WALL_S must be a whole number of seconds, got '$WALL'"; exit 1 ;;
esac
AUTOTUNE=${BENCH_AUTOTUNE_CAP_S:-110}
number BENCH_AUTOTUNE_CAP_S "$AUTOTUNE"
COMPILE=${BENCH_COMPILE_CAP_S:-60}
number BENCH_COMPILE_CAP_S "$COMPILE"
SCALE=${BENCH_STAGE_SCALE:-1}
number BENCH_STAGE_SCALE "$SCALE"

if [ $DRY = 1 ]; then
  say "dry run: no GPU used; gpuopt rows through the host emulation, PyTorch on the CPU"
elif ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  # No GPU, no benchmark: say so at once and fail.
  say "error: no NVIDIA GPU or driver here (nvidia-smi missing or failing): nothing measured"
  exit 2
fi
if [ ! -f "$ART/manifest.json" ]; then
  say "error: $ART/manifest.json missing: run benchmarks/gpu/prepare.sh$([ $DRY = 1 ] && echo ' --dry-run') on the build machine and carry $ART"
  exit 1
fi
# Artifacts compiled against other runtime sources may be refused by (or
# misread by) the reader built below: say so before building anything.
if [ ! -f "$ART/source.json" ]; then
  say "error: $ART/source.json missing (an interrupted or older prepare.sh): run benchmarks/gpu/prepare.sh$([ $DRY = 1 ] && echo ' --dry-run') again and carry $ART"
  exit 1
fi
DIGEST=$(bash benchmarks/gpu/runtime-digest.sh)
if [ -z "$DIGEST" ]; then
  say "error: benchmarks/gpu/runtime-digest.sh printed no digest of the runtime sources"
  exit 1
fi
PREPARED=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("runtime_digest", ""))' "$ART/source.json" 2>/dev/null)
if [ "$PREPARED" != "$DIGEST" ]; then
  say "error: $ART was prepared against other runtime sources (digest '${PREPARED}', here $DIGEST): run benchmarks/gpu/prepare.sh$([ $DRY = 1 ] && echo ' --dry-run') again and carry $ART"
  exit 1
fi
say "artifacts: $("$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); print("prepared", s.get("prepared"), "at commit", s.get("commit"), "with uncommitted changes" if s.get("uncommitted_changes") else "")' "$ART/source.json")"
[ $DRY = 1 ] || nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$LOG"

# cuDNN and cuBLASLt for Library steps (CUDABackend.md "Vendor libraries"):
# PyTorch's wheel ships them under site-packages/nvidia; exported before any
# gpuopt run, and the cuDNN headers there serve the runtime's build when the
# toolkit has none.
NVIDIA_SITE=$("$PY" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null || true)
find_vendor() {
  [ -n "$NVIDIA_SITE" ] || return 0
  for name in "$@"; do
    found=$(find "$NVIDIA_SITE/nvidia" -name "$name" \( -type f -o -type l \) 2>/dev/null | sort | head -n 1)
    if [ -n "$found" ]; then
      echo "$found"
      return 0
    fi
  done
}
if [ -z "${GPUOPT_CUDNN_LIBRARY:-}" ]; then
  GPUOPT_CUDNN_LIBRARY=$(find_vendor libcudnn.so.9)
fi
if [ -z "${GPUOPT_CUBLASLT_LIBRARY:-}" ]; then
  GPUOPT_CUBLASLT_LIBRARY=$(find_vendor libcublasLt.so.13 libcublasLt.so.12)
fi
CUDNN_HEADER=$(find_vendor cudnn.h)
for var in GPUOPT_CUDNN_LIBRARY GPUOPT_CUBLASLT_LIBRARY; do
  if [ -n "${!var}" ]; then
    export "${var?}"
    say "vendor library: $var=${!var}"
  else
    unset "$var"
    say "vendor library: $var not found under ${NVIDIA_SITE:-site-packages (no nvidia package)}: the runtime looks it up by name"
  fi
done

if [ -n "${BENCH_RUNTIME:-}" ]; then
  RUNTIME=$(realpath -m "$BENCH_RUNTIME")
  [ -x "$RUNTIME" ] || { say "error: BENCH_RUNTIME=$BENCH_RUNTIME is not an executable"; exit 1; }
  say "runtime: $RUNTIME (BENCH_RUNTIME: not built)"
else
  if [ ! -f "$ART/include/flatbuffers/flatbuffers.h" ]; then
    say "error: $ART/include/flatbuffers/flatbuffers.h missing: run benchmarks/gpu/prepare.sh again and carry $ART"
    exit 1
  fi
  say "building the CUDA runtime (runtime/cuda, no LLVM)"
  BUILD=${BENCH_BUILD_DIR:-/tmp/gpuopt-cuda-runtime}
  export PATH=/usr/local/cuda/bin:$PATH
  vendor_include=()
  if [ ! -f /usr/local/cuda/include/cudnn.h ] && [ -n "$CUDNN_HEADER" ]; then
    vendor_include=("-DGPUOPT_CUDNN_INCLUDE_DIR=$(dirname "$CUDNN_HEADER")")
    say "cuDNN headers: $(dirname "$CUDNN_HEADER")"
  fi
  if ! timeout 120 cmake -G Ninja -S runtime -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
         "-DGPUOPT_FLATBUFFERS_INCLUDE_DIR=$ART/include" "${vendor_include[@]}" >> "$LOG" 2>&1 \
     || ! timeout 180 ninja -C "$BUILD" gpuopt-cuda-run >> "$LOG" 2>&1; then
    say "error: building the runtime failed (see $LOG)"
    exit 1
  fi
  RUNTIME=$BUILD/bin/gpuopt-cuda-run
fi
USED=$((SECONDS - START))
DEFAULT_BUDGET=$((WALL - USED - 10))
[ $DEFAULT_BUDGET -ge 60 ] || DEFAULT_BUDGET=60
BUDGET=${BENCH_BUDGET_S:-$DEFAULT_BUDGET}
number BENCH_BUDGET_S "$BUDGET"
say "runtime ready in ${USED} s; benchmark budget ${BUDGET} s"
args=(--artifacts "$ART" --runtime "$RUNTIME" --out "$OUT" --budget "$BUDGET"
      --autotune-cap "$AUTOTUNE" --compile-cap "$COMPILE" --stage-scale "$SCALE")
[ -z "${BENCH_STAGES:-}" ] || args+=(--stages "$BENCH_STAGES")
[ -z "${BENCH_RUNS:-}" ] || args+=(--runs "$BENCH_RUNS")
[ -z "${BENCH_WARMUP:-}" ] || args+=(--warmup "$BENCH_WARMUP")
[ -z "${BENCH_PROFILE_PASSES:-}" ] || args+=(--profile-passes "$BENCH_PROFILE_PASSES")
[ $DRY = 0 ] || args+=(--dry-run)
# The budget bounds bench.py; the timeout (SIGTERM, then SIGKILL) is the
# backstop: bench.py renders what it has on SIGTERM.
PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 \
  timeout -k 10 "$(awk "BEGIN { print $BUDGET + 60 }")" "$PY" benchmarks/gpu/bench.py "${args[@]}" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
# Whatever happened to bench.py, results.md shows what the JSONL holds.
if [ -f "$OUT/results.jsonl" ]; then
  PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} "$PY" benchmarks/gpu/bench.py --render "$OUT" 2>&1 | tee -a "$LOG"
fi
say "done in $((SECONDS - START)) s (exit $rc)"
exit "$rc"
