#!/usr/bin/env bash
# Builds gpuopt's libFuzzer targets in their own build directory and runs each
# for a fixed time, one after the other; ends with executions, coverage and
# crashes per target and exits non-zero when a target found a crash.
#   fuzz/run.sh [--smoke] [TARGET...]    TARGET: safetensors npy seg-verify seg-passes
#                                        model-metadata cuda-artifact seg-lowering
# FUZZ_SECONDS   seconds per target (default 300; --smoke: always 5)
# FUZZ_BUILD_DIR build directory (default build-fuzz)
# FUZZ_CXX       the clang++ to build with (default clang++-22)
# FUZZ_BUILD=0   run the targets as built, without configuring or building
# Each target's corpus grows in $FUZZ_BUILD_DIR/corpus/TARGET; crashes land in
# $FUZZ_BUILD_DIR/artifacts/TARGET; the logs in $FUZZ_BUILD_DIR/logs.
# docs/Reliability.md says how to reproduce and minimize a crash.
set -uo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [ "${1:-}" = "--smoke" ]; then
  smoke=1
  shift
fi
SECONDS_PER_TARGET=${FUZZ_SECONDS:-300}
[ $smoke = 1 ] && SECONDS_PER_TARGET=5
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
CXX=${FUZZ_CXX:-clang++-22}
LLVM_DIR=${LLVM_DIR:-/usr/lib/llvm-22}
TARGETS=("$@")
[ ${#TARGETS[@]} = 0 ] && TARGETS=(safetensors npy seg-verify seg-passes
  model-metadata cuda-artifact seg-lowering)

dict_of() {
  case $1 in
    seg-*) echo seg ;;
    *) echo "$1" ;;
  esac
}

if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER="${CXX/clang++/clang}" -DCMAKE_CXX_COMPILER="$CXX" \
      -DMLIR_DIR="$LLVM_DIR/lib/cmake/mlir" -DLLVM_EXTERNAL_LIT="$LLVM_DIR/bin/lit" \
      -DGPUOPT_ENABLE_TORCH=OFF -DGPUOPT_ENABLE_FUZZERS=ON >/dev/null || exit 1
  fi
  ninja -C "$BUILD" gpuopt-fuzzers || exit 1
fi
.venv/bin/python fuzz/seeds.py "$BUILD/seeds" || exit 1

# The targets are instrumented, libMLIR/libLLVM (Debian's) are not. LLVM's
# BumpPtrAllocator poisons a new slab from instrumented (header-inlined) code,
# e.g. when a seg attribute's storage is uniqued in the context's allocator,
# and libMLIR's own uninstrumented allocations from that slab are never
# unpoisoned: its reads of them (a DenseArrayAttr's data) were reported as
# use-after-poison. Manual poisoning is therefore ignored; ASan's own
# redzones and heap checks stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allow_user_poisoning=0"

declare -a rows
status=0
for target in "${TARGETS[@]}"; do
  corpus=$BUILD/corpus/$target
  artifacts=$BUILD/artifacts/$target
  log=$BUILD/logs/$target.log
  seeds=$BUILD/seeds/$(dict_of "$target")
  mkdir -p "$corpus" "$artifacts" "$BUILD/logs"
  # fuzz/regressions holds the inputs of fixed findings: every run replays
  # them first.
  regressions=()
  [ -d "fuzz/regressions/$target" ] && regressions=("fuzz/regressions/$target")
  stamp=$BUILD/logs/$target.start
  touch "$stamp"
  echo "=== fuzz $target: $SECONDS_PER_TARGET s"
  "$BUILD/bin/gpuopt-fuzz-$target" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=4096 \
    -print_final_stats=1 -dict="fuzz/dicts/$(dict_of "$target").dict" \
    -artifact_prefix="$artifacts/" \
    "$corpus" "$seeds" "${regressions[@]}" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 edges, \2 features, \3 inputs/p' <<<"$last")
  new=$(find "$artifacts" -type f -newer "$stamp")
  found=$(grep -c . <<<"$new")
  if [ $rc != 0 ] || [ "$found" != 0 ]; then
    status=1
    echo "--- $target: exit $rc; the end of $log:"
    tail -n 40 "$log"
    [ -n "$new" ] && echo "--- new artifacts:" && echo "$new"
  fi
  rows+=("$(printf '  %-12s %10s execs %7s/s  cov %-40s crashes %s' \
    "$target" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$found")")
done

echo
echo "=== gpuopt fuzz summary ($SECONDS_PER_TARGET s per target)"
printf '%s\n' "${rows[@]}"
[ $status = 0 ] && echo "  no crashes" || echo "  CRASHES FOUND: see $BUILD/artifacts and docs/Reliability.md"
exit $status
