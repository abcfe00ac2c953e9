#!/usr/bin/env bash
# The GPU benchmark, for a machine with an NVIDIA GPU, the CUDA toolkit,
# cmake, ninja and Python 3.12 with torch (no LLVM/MLIR, no network):
#   benchmarks/gpu/run.sh OUTDIR [ARTIFACT_DIR]
# ARTIFACT_DIR (default benchmarks/gpu/artifacts) comes from prepare.sh on
# the build machine, with the FlatBuffers headers the runtime builds with
# (ARTIFACT_DIR/include/flatbuffers: no Debian packages here). Builds the
# CUDA runtime from runtime/cuda, makes the weights from the seeded zoo
# (random BatchNorm statistics and biases too: gpuopt.randomize),
# checks every gpuopt row against PyTorch on the GPU, measures the ceilings
# and times the rows; writes results.md,
# results.json, roofline.png and bench.log (at most 8 files) to OUTDIR.
# Hard budget: BENCH_BUDGET_S (default 290 s) for everything after the build;
# rows that no longer fit are skipped and listed as such.
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: benchmarks/gpu/run.sh OUTDIR [ARTIFACT_DIR]" >&2
  exit 1
fi
START=$SECONDS
# Paths given are relative to the caller's directory.
OUT=$(realpath -m "$1")
ART=$(realpath -m "${2:-$(dirname "$0")/artifacts}")
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$OUT" || exit 1
PY=${PYTHON:-python3}
LOG=$OUT/bench.log
say() { echo "run.sh: $*" | tee -a "$LOG"; }
: > "$LOG"

# No GPU, no benchmark: say so at once and fail.
if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  say "error: no NVIDIA GPU or driver here (nvidia-smi missing or failing): nothing measured"
  exit 2
fi
if [ ! -f "$ART/manifest.json" ]; then
  say "error: $ART/manifest.json missing: run benchmarks/gpu/prepare.sh on the build machine and carry $ART"
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$LOG"

if [ ! -f "$ART/include/flatbuffers/flatbuffers.h" ]; then
  say "error: $ART/include/flatbuffers/flatbuffers.h missing: run benchmarks/gpu/prepare.sh again and carry $ART"
  exit 1
fi
say "building the CUDA runtime (runtime/cuda, no LLVM)"
BUILD=${BENCH_BUILD_DIR:-/tmp/gpuopt-cuda-runtime}
export PATH=/usr/local/cuda/bin:$PATH
if ! timeout 120 cmake -G Ninja -S runtime -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
       "-DGPUOPT_FLATBUFFERS_INCLUDE_DIR=$ART/include" >> "$LOG" 2>&1 \
   || ! timeout 180 ninja -C "$BUILD" >> "$LOG" 2>&1; then
  say "error: building the runtime failed (see $LOG)"
  exit 1
fi
USED=$((SECONDS - START))
BUDGET=${BENCH_BUDGET_S:-290}
say "runtime built in ${USED} s; benchmark budget ${BUDGET} s"
PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 timeout $((BUDGET + 30)) \
  "$PY" benchmarks/gpu/bench.py --artifacts "$ART" --runtime "$BUILD/bin/gpuopt-cuda-run" \
  --out "$OUT" --budget "$BUDGET" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
say "done in $((SECONDS - START)) s (exit $rc)"
exit "$rc"
