#!/usr/bin/env bash
# Runs every gpuopt test suite and ends with a summary; exits non-zero when
# any suite fails. Called by `make check` after the build.
#   utils/check.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
PY=.venv/bin/python
export GPUOPT_BUILD_DIR="$PWD/$BUILD_DIR"

declare -a names results
run_suite() {
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS
  "$@"
  local rc=$?
  names+=("$name")
  results+=("$([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)") in $((SECONDS - start)) s")
  return 0
}

run_suite "lit (IR and tool tests)" \
  /usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"
run_suite "pytest (reference backend vs PyTorch, bad input)" \
  "$PY" -m pytest -q test/python
run_suite "ruff (Python lint and format)" \
  sh -c ".venv/bin/ruff check --config pyproject.toml python test/python examples fuzz benchmarks && \
         .venv/bin/ruff format --check --config pyproject.toml python test/python examples fuzz benchmarks"
run_suite "fuzz smoke (libFuzzer, 5 s per target)" \
  fuzz/run.sh --smoke
run_suite "dialect and pass docs generated from ODS" \
  test -s "$BUILD_DIR/docs/Dialects/SegDialect.md" -a -s "$BUILD_DIR/docs/SegPasses.md" \
    -a -s "$BUILD_DIR/docs/AnalysisPasses.md" -a -s "$BUILD_DIR/docs/ConversionPasses.md"

echo
echo "=== gpuopt check summary"
status=0
for i in "${!names[@]}"; do
  printf '  %-52s %s\n' "${names[$i]}" "${results[$i]}"
  case "${results[$i]}" in FAIL*) status=1 ;; esac
done
[ $status = 0 ] && echo "  all suites passed" || echo "  SOME SUITES FAILED"
exit $status
