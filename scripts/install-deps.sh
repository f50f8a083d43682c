#!/usr/bin/env bash
# Installs what fusion needs and does nothing when everything is already
# there: the C++ toolchain and LLVM/MLIR 22 from Debian 12's packages, and
# the Python toolchain (PyTorch pinned to the GPU machine's version, pybind11,
# numpy, pytest) from PyPI into the project's virtual environment, .venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
packages=(cmake ninja-build ccache g++ python3 python3-dev python3-venv
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
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

# The virtual environment, rebuilt only when the requirements change.
requirements="$root/python_bindings/requirements.txt"
stamp="$root/.venv/requirements.installed"
if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
  [ -x "$root/.venv/bin/python" ] || /usr/bin/python3 -m venv "$root/.venv"
  "$root/.venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$requirements"
  cp "$requirements" "$stamp"
fi
