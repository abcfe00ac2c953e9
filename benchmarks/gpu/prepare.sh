#!/usr/bin/env bash
# Prepares the GPU benchmark on the build machine (LLVM/MLIR and the CUDA
# toolkit here, no GPU needed): exports the zoo models, compiles every
# benchmark row for the GPU with gpuopt-compile and records the cost model's
# counts, so that benchmarks/gpu/run.sh needs no LLVM on the GPU machine.
# It also copies the FlatBuffers headers (ARTIFACT_DIR/include/flatbuffers,
# the build's GPUOPT_FLATBUFFERS_INCLUDE_DIR): the runtime reads the artifact
# schema with them, and the GPU machine has no Debian packages.
#   benchmarks/gpu/prepare.sh [--dry-run] [ARTIFACT_DIR]
#       (default benchmarks/gpu/artifacts; with --dry-run
#       benchmarks/gpu/artifacts-dry, inputs of 32x32 instead of 224x224 and
#       64x64 instead of 256x256, for run.sh --dry-run's host emulation)
# Environment: BUILD_DIR (default build), CUDA_ARCH (default sm_90),
# PYTHON (default .venv/bin/python), ROWS_ONLY (space-separated row names:
# prepare only these, e.g. ROWS_ONLY=unext), BENCH_SIZE (the input size,
# default 224, 32 with --dry-run; a multiple of 16, 32 or more for the
# UNeXt rows). Every artifact carries its host image
# (gpuopt-compile's default), so the same files run on the GPU and through
# the emulator. manifest.json holds, per row, the cost model's counts and
# H200 prediction, the per-op FLOPs and bytes the roofline floor is made of,
# and the plan's launch counts; source.json the commit, and the digest of
# the runtime sources (runtime-digest.sh) run.sh checks. Weights are not kept: run.sh
# makes them on the GPU machine from the seeded zoo constructors and
# gpuopt.randomize (the artifacts take their weights at load).
set -euo pipefail
DRY=0
if [ "${1:-}" = --dry-run ]; then
  DRY=1
  shift
fi
if [ $DRY = 1 ]; then
  ART=$(realpath -m "${1:-$(dirname "$0")/artifacts-dry}")
  SIZE=${BENCH_SIZE:-32}
else
  ART=$(realpath -m "${1:-$(dirname "$0")/artifacts}")
  SIZE=${BENCH_SIZE:-224}
fi
case $SIZE in
  '' | *[!0-9]*) echo "prepare: error: BENCH_SIZE must be a positive multiple of 16, got '$SIZE'" >&2; exit 1 ;;
esac
if [ "$SIZE" -lt 16 ] || [ $((SIZE % 16)) != 0 ]; then
  echo "prepare: error: BENCH_SIZE must be a positive multiple of 16, got '$SIZE'" >&2
  exit 1
fi
# The larger-input ablation: 256 beside 224, twice the size otherwise.
if [ "$SIZE" = 224 ]; then BIG=256; else BIG=$((2 * SIZE)); fi
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
ARCH=${CUDA_ARCH:-sm_90}
PY=${PYTHON:-.venv/bin/python}
COMPILE=$BUILD_DIR/bin/gpuopt-compile
OPT=$BUILD_DIR/bin/gpuopt-opt
RUN=$BUILD_DIR/bin/gpuopt-cuda-run
for t in "$COMPILE" "$OPT" "$RUN"; do
  [ -x "$t" ] || { echo "prepare: error: $t is not built (make build)" >&2; exit 1; }
done
# Tools older than the sources would write artifacts the runtime run.sh
# builds from these sources refuses (source.json records the sources).
ninja -C "$BUILD_DIR" gpuopt-compile gpuopt-opt gpuopt-cuda-run > /dev/null \
  || { echo "prepare: error: bringing $BUILD_DIR's tools up to date failed (ninja -C $BUILD_DIR)" >&2; exit 1; }
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

# row name | zoo model | input shape | graph | gpuopt-compile --pipeline
# (empty: none) | more gpuopt-compile flags (empty: none; the TF32 rows:
# --gpu-precision=tf32, the workgroup-tiled convolutions and linears on
# tensor cores; the library rows: --gpu-conv=library, convolutions and
# linears through cuDNN/cuBLASLt, and --gpu-precision; the auto rows:
# --gpu-conv=auto, each through cuDNN/cuBLASLt where the cost model's H200
# predicts it faster). In order of importance (run.sh checks them in this
# order).
S=$SIZE
LIB="optimized, cuDNN/cuBLASLt"
TC="optimized, TF32 tensor cores"
AUTO="optimized, --gpu-conv=auto"
ROWS="
rolling_unet_s-opt|rolling_unet_s|1,3,$S,$S|optimized|gpuopt-optimize|
unet-opt|unet|1,3,$S,$S|optimized|gpuopt-optimize|
rolling_unet_s-opt-tf32|rolling_unet_s|1,3,$S,$S|$TC|gpuopt-optimize|--gpu-precision=tf32
unet-opt-tf32|unet|1,3,$S,$S|$TC|gpuopt-optimize|--gpu-precision=tf32
unet-opt-lib|unet|1,3,$S,$S|$LIB|gpuopt-optimize|--gpu-conv=library
unet-opt-lib-tf32|unet|1,3,$S,$S|$LIB|gpuopt-optimize|--gpu-conv=library --gpu-precision=tf32
rolling_unet_s-opt-lib|rolling_unet_s|1,3,$S,$S|$LIB|gpuopt-optimize|--gpu-conv=library
rolling_unet_s-opt-lib-tf32|rolling_unet_s|1,3,$S,$S|$LIB|gpuopt-optimize|--gpu-conv=library --gpu-precision=tf32
unet-opt-auto|unet|1,3,$S,$S|$AUTO|gpuopt-optimize|--gpu-conv=auto
rolling_unet_s-opt-auto|rolling_unet_s|1,3,$S,$S|$AUTO|gpuopt-optimize|--gpu-conv=auto
rolling_unet_s|rolling_unet_s|1,3,$S,$S|exported|
unet|unet|1,3,$S,$S|exported|
unext-opt|unext|1,3,$S,$S|optimized|gpuopt-optimize
unext|unext|1,3,$S,$S|exported|
unext_stripe-opt|unext_stripe|1,3,$S,$S|optimized|gpuopt-optimize
unext_stripe|unext_stripe|1,3,$S,$S|exported|
rolling_unet_s-only-fuse-roll|rolling_unet_s|1,3,$S,$S|ablation: only fuse-roll|gpuopt-optimize{simplify-token-layout=false fuse-conv-bn-relu=false}
rolling_unet_s-only-simplify-token-layout|rolling_unet_s|1,3,$S,$S|ablation: only simplify-token-layout|gpuopt-optimize{fuse-roll=false fuse-conv-bn-relu=false}
rolling_unet_s-only-fuse-conv-bn-relu|rolling_unet_s|1,3,$S,$S|ablation: only fuse-conv-bn-relu|gpuopt-optimize{fuse-roll=false simplify-token-layout=false}
rolling_unet_s-opt-deform-conv|rolling_unet_s|1,3,$S,$S|ablation: deform-conv|gpuopt-optimize{deform-conv=true}
unet-opt-single-buffer|unet|1,3,$S,$S|ablation: single-buffered tiles|gpuopt-optimize|--cuda-workgroup-tile-double-buffer=false
rolling_unet_s-opt-no-async-copy|rolling_unet_s|1,3,$S,$S|ablation: operands through registers|gpuopt-optimize|--cuda-workgroup-tile-async-copy=false
unet-opt-no-async-copy|unet|1,3,$S,$S|ablation: operands through registers|gpuopt-optimize|--cuda-workgroup-tile-async-copy=false
unet-opt-2-stages|unet|1,3,$S,$S|ablation: 2 copy stages|gpuopt-optimize|--cuda-workgroup-tile-stages=2
unet-opt-4x4-threads|unet|1,3,$S,$S|ablation: 4 x 4 thread tiles at most|gpuopt-optimize|--cuda-workgroup-tile-max-thread-outputs=16
unet-opt-tf32-no-async-copy|unet|1,3,$S,$S|ablation: TF32 operands through registers|gpuopt-optimize|--gpu-precision=tf32 --cuda-workgroup-tile-async-copy=false
rolling_unet_s-opt-no-split-k|rolling_unet_s|1,3,$S,$S|ablation: no split-K|gpuopt-optimize|--cuda-workgroup-tile-split-k=1
rolling_unet_s-opt-unfused-tiles|rolling_unet_s|1,3,$S,$S|ablation: tiled convolutions in their own kernels|gpuopt-optimize|--cuda-workgroup-tile-fuse-nests=false
rolling_unet_s-opt-no-prefetch|rolling_unet_s|1,3,$S,$S|ablation: no prefetch|gpuopt-optimize|--cuda-workgroup-tile-prefetch=false
rolling_unet_s-opt-$BIG|rolling_unet_s|1,3,$BIG,$BIG|optimized|gpuopt-optimize
rolling_unet_s-opt-b8|rolling_unet_s|8,3,$S,$S|optimized|gpuopt-optimize
"
echo '[' > "$ART/manifest.json"
first=1
while IFS='|' read -r row model shape graph pipeline flags; do
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
  # shellcheck disable=SC2206 # the flags are words without spaces
  [ -z "$flags" ] || args+=($flags)
  "$COMPILE" "${args[@]}"
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  # The cost model's counts of the graph the row runs: the graph's own
  # FLOPs and bytes (gpu-conv=model: the roofline floor's terms) and the
  # H200 prediction of its convolutions and linears on the row's route
  # (--gpu-conv, generated by default), the generated ones tiled as the
  # row's --cuda-workgroup-tile-* flags tile them.
  cost=$WORK/$row.cost.json
  routed=$WORK/$row.routed.json
  # In the row's precision: a TF32 row's convolutions and linears at the TF32 peak.
  precision=
  [[ " $flags " != *" --gpu-precision=tf32 "* ]] || precision=" precision=tf32"
  route=generated
  tiling=
  for flag in $flags; do
    case $flag in
      --gpu-conv=*) route=${flag#--gpu-conv=} ;;
      --cuda-workgroup-tile-max-thread-outputs=* | --cuda-workgroup-tile-split-k=*)
        tiling+=" ${flag#--cuda-}" ;;
    esac
  done
  report="seg-cost-report{device=h200 format=json output=$cost$precision}"
  report+=",seg-cost-report{device=h200 format=json output=$routed$precision gpu-conv=$route$tiling}"
  "$OPT" "$src" --pass-pipeline="builtin.module(${pipeline:+$pipeline,}$report)" -o /dev/null
  [ $first = 1 ] || echo ',' >> "$ART/manifest.json"
  first=0
  # The plan's launch counts ("launches: N at load time, M per forward").
  inspect=$("$RUN" "$ART/$row.gpuopt" --inspect)
  # The plan's steps per forward (what --profile times one by one).
  "$RUN" "$ART/$row.gpuopt" --dump > "$WORK/$row.dump"
  "$PY" - "$row" "$model" "$shape" "$graph" "$pipeline" "$secs" "$cost" "$routed" "$ART/$row.gpuopt" \
    "$inspect" "$DRY" "$flags" "$WORK/$row.dump" >> "$ART/manifest.json" <<'PYEOF'
import json, os, re, sys
row, model, shape, graph, pipeline, secs, cost, routed, art, inspect, dry, flags, dump = sys.argv[1:]
report = json.load(open(cost))
f, dev = report["functions"][0], report["device"]
routed = json.load(open(routed))
r = routed["functions"][0]
m = re.search(r"launches: (\d+) at load time, (\d+) per forward", inspect)
if not m:
    sys.exit(f"prepare: error: {art}: no launch counts in gpuopt-cuda-run --inspect's output: {inspect!r}")
# The roofline floor's terms (run-time ops of this graph, compiled view):
# [FLOPs, bytes, 1 if the op multiplies-accumulates (conv/linear/matmul)].
floor_ops = [
    [op["compiled"]["flops"], op["compiled"]["bytes"], int(op["macs"] > 0)]
    for op in f["ops"]
    if not op.get("load_time") and (op["compiled"]["flops"] or op["compiled"]["bytes"])
]
# --dump is text: its byte arrays are abbreviated ("..., ... (N bytes)").
program = json.loads(re.sub(r", \.\.\. \(\d+ bytes\)", "", open(dump).read()))["program"]
def plan_step(s):
    name = f"library {s['library']}" if s["kind"] == "Library" else program["kernels"][s["kernel"]]["name"]
    g, b = s["grid"], s["block"]
    return [name, g["x"] * g["y"] * g["z"], b["x"] * b["y"] * b["z"], os.path.basename(s.get("loc", ""))]
plan_steps = [plan_step(s) for s in program["run"]]
# Every source a step's kernel was made of (a kernel of fused loops has several).
step_sources = [sorted({os.path.basename(x) for x in s.get("sources", [])}) for s in program["run"]]
print(json.dumps({
    "row": row, "model": model, "shape": [int(s) for s in shape.split(",")],
    "graph": graph, "pipeline": pipeline, "compile_flags": flags,
    "gpu_conv": next((f.split("=", 1)[1] for f in flags.split() if f.startswith("--gpu-conv=")), "generated"),
    # The arithmetic of the artifact's tensor-core tiles and library steps
    # (its other generated kernels are FP32).
    "gpuopt_precision": "TF32" if "--gpu-precision=tf32" in flags.split() else "FP32",
    # Of the steps per forward, those that call cuDNN/cuBLASLt (the rest launch kernels).
    "library_steps": int(ls.group(1))
    if (ls := re.search(r"library steps: \d+ at load time, (\d+) per forward", inspect))
    else 0,
    "dry_run": dry == "1", "compile_s": round(float(secs), 2),
    "artifact": os.path.basename(art), "artifact_bytes": os.path.getsize(art),
    "launches_at_load": int(m.group(1)), "launches_per_forward": int(m.group(2)),
    "params": f["params"], "macs": f["macs"], "thop_macs": f["thop_macs"], "flops": f["flops"],
    "bytes": f["compiled"]["bytes"], "precision": f["precision"],
    # The prediction on the row's route (generated kernels tiled as the row
    # tiles them, library calls, or per op the faster for auto), with the
    # plan's launches per forward in place of the cost model's kernel count
    # (one or more per op): the exported Rolling-UNet-S has 2165 of those and
    # 109 launches. predicted_ops_h200_s keeps the cost model's own figure.
    # (The launch term keeps its library calls' own cost, library_call_s.)
    "predicted_h200_s": r["compiled"]["time_s"]
    + (int(m.group(2)) - r["compiled"]["kernels"]) * dev["launch_s"],
    "predicted_ops_h200_s": r["compiled"]["time_s"], "predicted_kernels": r["compiled"]["kernels"],
    "predicted_route": routed["gpu_conv"],
    # The generic compiled model (library tiles at compute_efficiency): the
    # torch.compile rows' prediction of the exported graph.
    "predicted_model_h200_s": f["compiled"]["time_s"],
    "predicted_eager_h200_s": f["eager"]["time_s"], "eager_kernels": f["eager"]["kernels"],
    "cost_device": {
        "id": dev["id"], "fp32_flops": dev["peak_flops"]["fp32"], "tf32_flops": dev["peak_flops"]["tf32"],
        "bytes_per_s": dev["bandwidth"], "launch_s": dev["launch_s"],
    },
    "floor_ops": floor_ops,
    # Per step of a forward, in plan order: [kernel name or "library ROUTINE",
    # blocks, threads per block, source file:line:col].
    "steps": plan_steps,
    "step_sources": step_sources,
    # The generated workgroup-tiled convolutions and linears of the row's
    # route, in program order: bench.py finds each one's plan step (source,
    # blocks of 256 threads) and reports its measured rate and efficiency.
    "convs": [
        {"loc": os.path.basename(op["loc"]), "type": op["type"], "flops": op["flops"],
         "tile": c["tile"], "splits": c["splits"], "blocks": c["blocks"],
         "utilization": c["utilization"]}
        for op in r["ops"]
        if (c := op["compiled"]).get("route") == "generated" and "tile" in c
    ],
    # The cost model's generated_compute_efficiency of the row's precision.
    "generated_efficiency": routed["device"]["generated_compute_efficiency"][
        "tf32" if "--gpu-precision=tf32" in flags.split() else "fp32"],
}), end="")
PYEOF
  echo "prepare: $row: $(du -h "$ART/$row.gpuopt" | cut -f1), compiled in ${secs} s"
done <<< "$ROWS"
echo ']' >> "$ART/manifest.json"
# Written last (an interrupted preparation has none): the commit the
# artifacts were compiled at and the runtime sources they were read with.
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
DIRTY=false
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && DIRTY=true
"$PY" -c 'import json, sys; print(json.dumps({"commit": sys.argv[1], "uncommitted_changes": sys.argv[2] == "true",
    "prepared": sys.argv[3], "runtime_digest": sys.argv[4]}))' \
  "$COMMIT" "$DIRTY" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$(bash benchmarks/gpu/runtime-digest.sh)" > "$ART/source.json"
total=$(du -sb "$ART" | cut -f1)
echo "prepare: wrote $ART ($total bytes, $(du -sh "$ART" | cut -f1)); carry it with benchmarks/gpu/run.sh"
# What travels to the GPU machine is at most 64 MiB with the rest of the tree.
if [ "$total" -gt $((48 << 20)) ]; then
  echo "prepare: warning: $ART is over 48 MiB: with the source tree it may not fit the 64 MiB carried" >&2
fi
