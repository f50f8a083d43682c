#!/usr/bin/env bash
# Installs what fusion needs from Debian 12's packages; does nothing when
# everything is already there.
set -euo pipefail
packages=(cmake ninja-build ccache g++ python3
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          python3-dev pybind11-dev python3-numpy python3-pytest python3-torch
          clang-22 libclang-rt-22-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
