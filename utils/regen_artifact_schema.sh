#!/usr/bin/env bash
# Regenerates runtime/include/gpuopt/Runtime/Generated/Artifact_generated.h from
# Artifact.fbs with Debian's flatc (flatbuffers-compiler 2.0.8), the flags
# test/Runtime/artifact-schema.test checks with. Usage:
#   utils/regen_artifact_schema.sh [OUTDIR]   (default: next to the schema)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runtime/include/gpuopt/Runtime/Generated}
flatc --cpp --cpp-std c++17 --scoped-enums --gen-object-api --reflect-names \
  -o "$out" runtime/include/gpuopt/Runtime/Artifact.fbs
