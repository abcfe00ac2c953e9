#!/usr/bin/env bash
# Installs what gpuopt needs on a Debian bookworm machine, only when missing:
#   utils/bootstrap.sh apt    Debian packages (LLVM/MLIR 22, clang 22, ninja, ...)
#   utils/bootstrap.sh venv   the Python virtual environment .venv
# Idempotent: a second run does nothing but check.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              ninja-build cmake g++ make
              clang-22 libclang-rt-22-dev  # libFuzzer and sanitizer runtimes
              flatbuffers-compiler libflatbuffers-dev)  # the artifact schema

apt_missing() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  echo "${missing[@]:-}"
}

do_apt() {
  local missing
  missing=$(apt_missing)
  if [ -z "$missing" ]; then
    return 0
  fi
  echo "bootstrap: installing Debian packages: $missing"
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $missing
}

do_venv() {
  local stamp=.venv/.requirements.stamp
  if [ -f "$stamp" ] && cmp -s requirements.txt "$stamp"; then
    return 0
  fi
  local py="${PYTHON:-python3}"
  if ! "$py" -m venv --help >/dev/null 2>&1; then
    echo "bootstrap: $py cannot create virtual environments; installing python3-venv"
    PYTHON=/usr/bin/python3
    py=/usr/bin/python3
    APT_PACKAGES=(python3-venv)
    do_apt
  fi
  echo "bootstrap: setting up .venv ($("$py" --version 2>&1)) from requirements.txt"
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  # The gpuopt package is used in place from python/ (like an editable install).
  local site
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PWD/python" > "$site/gpuopt-source.pth"
  cp requirements.txt "$stamp"
}

case "${1:-}" in
  apt) do_apt ;;
  venv) do_venv ;;
  *) echo "usage: $0 apt|venv" >&2; exit 2 ;;
esac
