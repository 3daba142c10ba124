#!/usr/bin/env bash
# Installs everything Wavetile needs on Debian 12 (bookworm). Idempotent: a second run only
# checks. Needs root (or sudo) for apt.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22 liblld-22-dev
  libgtest-dev
  python3-dev pybind11-dev python3-numpy python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

test -x /usr/lib/llvm-22/bin/mlir-opt || { echo "setup: LLVM/MLIR 22 is missing after install" >&2; exit 1; }
echo "setup: all packages present"
