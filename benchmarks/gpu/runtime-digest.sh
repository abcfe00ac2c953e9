#!/usr/bin/env bash
# Prints a digest of the runtime's sources (every file under runtime/ that
# travels to the GPU machine, by path and contents): prepare.sh records it
# beside the artifacts it compiles, and run.sh refuses artifacts recorded
# against other sources before it builds anything, since a reader changed
# after them may refuse or misread them (the GPU machine has the tree but
# not its git history). In a git checkout the files are git's tracked and
# untracked-but-not-ignored ones (what the device copy holds); elsewhere all.
#   benchmarks/gpu/runtime-digest.sh   (from anywhere)
set -euo pipefail
cd "$(dirname "$0")/../.."
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  git ls-files -z -co --exclude-standard runtime
else
  find runtime -type f ! -path '*/__pycache__/*' -print0
fi | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
