#!/usr/bin/env bash
# The mutation check (`make mutation-check`, docs/Testing.md): does the
# emulated CUDA path catch realistic compiler bugs? Each utils/mutations/*.patch
# is one bug. In a scratch worktree of the committed HEAD (git worktree add
# --detach, its own build directory, kept between runs so that each rebuild
# is incremental) the script
#   1. builds the tools and runs the emulation tests unpatched: they must pass
#      (else no verdict means anything);
#   2. for each patch: applies it, rebuilds what it touches, runs the
#      emulation tests (stopping at the first failure), reverts the patch;
#      a failing test is "caught", all passing is "missed";
#   3. prints caught/missed per patch; exits 1 if one is missed, does not
#      apply or does not build.
#   utils/mutations/run.sh [PATCH...]        (default: utils/mutations/*.patch)
# Environment: MUTATION_DIR (default /tmp/gpuopt-mutation: src/ and build/),
# JOBS (ninja -j, default nproc), PYTHON (default .venv/bin/python),
# LLVM_DIR (default /usr/lib/llvm-22), MUTATION_TEST_TIMEOUT (seconds per
# test run, default 1500). Remove the scratch tree with
# `git worktree remove --force $MUTATION_DIR/src`. Uncommitted changes are not tested:
# the scratch tree is HEAD.
set -uo pipefail
CALLER=$PWD
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
SCRATCH=${MUTATION_DIR:-/tmp/gpuopt-mutation}
SRC=$SCRATCH/src
BUILD=$SCRATCH/build
JOBS=${JOBS:-$(nproc)}
PY=${PYTHON:-.venv/bin/python}
[[ $PY = /* ]] || PY=$ROOT/$PY # absolute, symlinks kept (a venv)
LLVM_DIR=${LLVM_DIR:-/usr/lib/llvm-22}
LOG=$SCRATCH/log
# Seconds for one run of the tests (a mutation that hangs them is caught).
TEST_TIMEOUT=${MUTATION_TEST_TIMEOUT:-1500}
# The tools the emulation tests run; gpuopt_runtime for CompiledModel.
TARGETS=(gpuopt-compile gpuopt-cuda-run gpuopt-opt gpuopt-run gpuopt_runtime)
# The emulation tests, but the rebuild of the runtime project without CUDA
# (no patch touches runtime/; it costs 20 s per patch).
TESTS=(test/python/test_cuda_emulate.py test/python/test_shift_emulate.py)
DESELECT=(-k "not test_emulator_needs_no_cuda_toolkit")

say() { echo "mutation-check: $*"; }
fail() { say "error: $*"; exit 1; }

# Absolute paths: those given relative to the caller's directory.
PATCHES=()
if [ $# -gt 0 ]; then
  for p in "$@"; do
    [[ $p = /* ]] || p=$CALLER/$p
    PATCHES+=("$p")
  done
else
  PATCHES=("$ROOT"/utils/mutations/*.patch)
fi
for p in "${PATCHES[@]}"; do
  [ -f "$p" ] || fail "no patch $p"
done
[ -x "$PY" ] || fail "$PY is missing (make venv)"
head=$(git rev-parse HEAD) || fail "not a git checkout"
git diff --quiet HEAD -- || say "warning: uncommitted changes here are not tested (the scratch tree is HEAD)"
mkdir -p "$SCRATCH" "$LOG" || exit 1

# The scratch worktree at HEAD, with every earlier patch gone.
if [ -e "$SRC/.git" ]; then
  git -C "$SRC" checkout --quiet --force --detach "$head" || fail "cannot check out $head in $SRC"
else
  rm -rf "$SRC"
  git worktree add --quiet --detach "$SRC" "$head" || fail "cannot add a worktree at $SRC"
fi
say "scratch tree $SRC at $(git -C "$SRC" log --oneline -1 | cut -c1-60)"
if [ ! -f "$BUILD/build.ninja" ]; then
  say "configuring $BUILD (the first build takes minutes)"
  cmake -G Ninja -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_DIR/lib/cmake/mlir" -DLLVM_EXTERNAL_LIT="$LLVM_DIR/bin/lit" \
    -DGPUOPT_PYTHON="$PY" > "$LOG/configure.log" 2>&1 || fail "configure failed (see $LOG/configure.log)"
fi

build() { # build LOGNAME
  ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]}" > "$LOG/$1.build.log" 2>&1
}
# Runs the tests from the scratch tree against its build; prints the first
# failure's pytest line; status 0 when every test passes.
run_tests() { # run_tests LOGNAME
  (
    cd "$SRC" || exit 2
    export PYTHONPATH=$SRC/python GPUOPT_BUILD_DIR=$BUILD
    # A mutated plan may write far past a buffer: a crash is a catch too.
    ulimit -v 16000000 2> /dev/null
    timeout "$TEST_TIMEOUT" "$PY" -m pytest -x -q -rf -p no:cacheprovider "${DESELECT[@]}" "${TESTS[@]}"
  ) > "$LOG/$1.test.log" 2>&1
}
first_failure() {
  grep -m1 -E '^(FAILED|ERROR) ' "$LOG/$1.test.log" | cut -c1-160 \
    || echo "the tests ran past ${TEST_TIMEOUT} s or crashed: $(tail -1 "$LOG/$1.test.log" | cut -c1-100)"
}

start=$SECONDS
say "building the unpatched tools"
build baseline || fail "the unpatched tree does not build (see $LOG/baseline.build.log)"
say "running the emulation tests unpatched"
if ! run_tests baseline; then
  first_failure baseline
  fail "the emulation tests fail without a mutation (see $LOG/baseline.test.log): no verdict"
fi
say "unpatched: all emulation tests pass ($((SECONDS - start)) s)"

declare -a names verdicts
status=0
for p in "${PATCHES[@]}"; do
  name=$(basename "$p" .patch)
  t0=$SECONDS
  if ! git -C "$SRC" apply --check "$p" 2> "$LOG/$name.apply.log"; then
    verdict="DOES NOT APPLY ($(head -1 "$LOG/$name.apply.log"))"
    status=1
  else
    git -C "$SRC" apply "$p"
    if ! build "$name"; then
      verdict="DOES NOT BUILD (see $LOG/$name.build.log)"
      status=1
    elif run_tests "$name"; then
      verdict="MISSED (every emulation test passed)"
      status=1
    else
      verdict="caught by $(first_failure "$name")"
    fi
    git -C "$SRC" checkout --quiet --force --detach "$head"
  fi
  names+=("$name")
  verdicts+=("$verdict")
  say "$name: $verdict ($((SECONDS - t0)) s)"
done

echo
echo "=== mutation check: ${#names[@]} patch(es) against $(git log --oneline -1 | cut -c1-60)"
for i in "${!names[@]}"; do
  printf '  %-28s %s\n' "${names[$i]}" "${verdicts[$i]}"
done
if [ $status = 0 ]; then
  echo "  every mutation caught ($((SECONDS - start)) s; logs in $LOG)"
else
  echo "  SOME MUTATIONS NOT CAUGHT ($((SECONDS - start)) s; logs in $LOG)"
fi
exit $status
