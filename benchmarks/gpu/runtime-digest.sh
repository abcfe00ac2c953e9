#!/usr/bin/env bash
# Prints a digest of the runtime's sources (every file run.sh's build reads
# that travels to the GPU machine: runtime/, tools/gpuopt-cuda-run/ and
# cmake/, by path and contents): prepare.sh records it
# beside the artifacts it compiles, and run.sh refuses artifacts recorded
# against other sources before it builds anything, since a reader changed
# after them may refuse or misread them (the GPU machine has the tree but
# not its git history). In a git checkout the files are git's tracked and
# untracked-but-not-ignored ones (what the device copy holds); elsewhere all.
#   benchmarks/gpu/runtime-digest.sh   (from anywhere)
set -euo pipefail
cd "$(dirname "$0")/../.."
SOURCES=(runtime tools/gpuopt-cuda-run cmake)
# (The checkout's own git only: a copy inside another repository uses find.)
if [ "$(git rev-parse --show-toplevel 2> /dev/null)" = "$PWD" ]; then
  git ls-files -z -co --deduplicate --exclude-standard "${SOURCES[@]}"
else
  find "${SOURCES[@]}" -type f ! -path '*/__pycache__/*' -print0
fi | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
