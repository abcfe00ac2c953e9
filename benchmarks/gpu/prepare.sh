#!/usr/bin/env bash
# Prepares the GPU benchmark on the build machine (LLVM/MLIR and the CUDA
# toolkit here, no GPU needed): exports the zoo models, compiles every
# benchmark row for the GPU with gpuopt-compile and records the cost model's
# counts, so that benchmarks/gpu/run.sh needs no LLVM on the GPU machine.
# It also copies the FlatBuffers headers (ARTIFACT_DIR/include/flatbuffers,
# the build's GPUOPT_FLATBUFFERS_INCLUDE_DIR): the runtime reads the artifact
# schema with them, and the GPU machine has no Debian packages.
#   benchmarks/gpu/prepare.sh [ARTIFACT_DIR]     (default benchmarks/gpu/artifacts)
# Environment: BUILD_DIR (default build), CUDA_ARCH (default sm_90),
# PYTHON (default .venv/bin/python), ROWS_ONLY (space-separated row names:
# prepare only these, e.g. ROWS_ONLY=unext). Weights are not kept: run.sh
# makes them on the GPU machine from the seeded zoo constructors and
# gpuopt.randomize (the artifacts take their weights at load).
set -euo pipefail
ART=$(realpath -m "${1:-$(dirname "$0")/artifacts}")
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
ARCH=${CUDA_ARCH:-sm_90}
PY=${PYTHON:-.venv/bin/python}
COMPILE=$BUILD_DIR/bin/gpuopt-compile
OPT=$BUILD_DIR/bin/gpuopt-opt
for t in "$COMPILE" "$OPT"; do
  [ -x "$t" ] || { echo "prepare: error: $t is not built (make build)" >&2; exit 1; }
done
[ -x /usr/local/cuda/bin/ptxas ] || { echo "prepare: error: no CUDA toolkit (/usr/local/cuda/bin/ptxas)" >&2; exit 1; }
# The headers the runtime build (cmake -S runtime) is configured with here.
FB_INCLUDE=$(sed -n 's/^GPUOPT_FLATBUFFERS_INCLUDE_DIR:PATH=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
FB_INCLUDE=${FB_INCLUDE:-/usr/include}
[ -f "$FB_INCLUDE/flatbuffers/flatbuffers.h" ] || {
  echo "prepare: error: no $FB_INCLUDE/flatbuffers/flatbuffers.h (install libflatbuffers-dev)" >&2; exit 1; }
rm -rf "$ART"
mkdir -p "$ART/include"
cp -r "$FB_INCLUDE/flatbuffers" "$ART/include/flatbuffers"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# row name | zoo model | input shape | gpuopt-compile --pipeline (empty: none)
ROWS="
unet|unet|1,3,224,224|
unet-opt|unet|1,3,224,224|gpuopt-optimize
rolling_unet_s|rolling_unet_s|1,3,224,224|
rolling_unet_s-opt|rolling_unet_s|1,3,224,224|gpuopt-optimize
unext|unext|1,3,224,224|
unext-opt|unext|1,3,224,224|gpuopt-optimize
unext_stripe|unext_stripe|1,3,224,224|
unext_stripe-opt|unext_stripe|1,3,224,224|gpuopt-optimize
rolling_unet_s-only-fuse-roll|rolling_unet_s|1,3,224,224|gpuopt-optimize{simplify-token-layout=false fuse-conv-bn-relu=false}
rolling_unet_s-only-simplify-token-layout|rolling_unet_s|1,3,224,224|gpuopt-optimize{fuse-roll=false fuse-conv-bn-relu=false}
rolling_unet_s-only-fuse-conv-bn-relu|rolling_unet_s|1,3,224,224|gpuopt-optimize{fuse-roll=false simplify-token-layout=false}
rolling_unet_s-opt-256|rolling_unet_s|1,3,256,256|gpuopt-optimize
rolling_unet_s-opt-b8|rolling_unet_s|8,3,224,224|gpuopt-optimize
"
echo '[' > "$ART/manifest.json"
first=1
while IFS='|' read -r row model shape pipeline; do
  [ -n "$row" ] || continue
  if [ -n "${ROWS_ONLY:-}" ] && [[ " $ROWS_ONLY " != *" $row "* ]]; then
    continue
  fi
  src=$WORK/$model-${shape//,/x}.mlir
  if [ ! -f "$src" ]; then
    "$PY" -m gpuopt.export "zoo:$model" -o "$src" --weights "$WORK/w.safetensors" \
      --input-shape "$shape" -q
  fi
  start=$(date +%s.%N)
  args=("$src" --target=cuda "--cuda-arch=$ARCH" -o "$ART/$row.gpuopt")
  [ -z "$pipeline" ] || args+=("--pipeline=$pipeline")
  "$COMPILE" "${args[@]}"
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  # The cost model's counts of the graph the row runs.
  cost=$WORK/$row.cost.json
  report="seg-cost-report{device=h200 format=json output=$cost}"
  "$OPT" "$src" --pass-pipeline="builtin.module(${pipeline:+$pipeline,}$report)" -o /dev/null
  [ $first = 1 ] || echo ',' >> "$ART/manifest.json"
  first=0
  "$PY" - "$row" "$model" "$shape" "$pipeline" "$secs" "$cost" "$ART/$row.gpuopt" >> "$ART/manifest.json" <<'PYEOF'
import json, os, sys
row, model, shape, pipeline, secs, cost, art = sys.argv[1:]
f = json.load(open(cost))["functions"][0]
print(json.dumps({
    "row": row, "model": model, "shape": [int(s) for s in shape.split(",")],
    "pipeline": pipeline, "compile_s": round(float(secs), 2),
    "artifact": os.path.basename(art), "artifact_bytes": os.path.getsize(art),
    "params": f["params"], "macs": f["macs"], "thop_macs": f["thop_macs"], "flops": f["flops"],
    "bytes": f["compiled"]["bytes"], "predicted_h200_s": f["compiled"]["time_s"],
    "predicted_eager_h200_s": f["eager"]["time_s"], "eager_kernels": f["eager"]["kernels"],
}), end="")
PYEOF
  echo "prepare: $row: $(du -h "$ART/$row.gpuopt" | cut -f1), compiled in ${secs} s"
done <<< "$ROWS"
echo ']' >> "$ART/manifest.json"
echo "prepare: wrote $ART ($(du -sh "$ART" | cut -f1)); carry it with benchmarks/gpu/run.sh"
