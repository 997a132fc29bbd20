#!/usr/bin/env bash
# Installs the Debian 12 packages trench needs, only those missing.
# Sourced by demo.sh and test.sh; safe to run again.
set -euo pipefail

TRENCH_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config git
  clang libclang-rt-14-dev          # libFuzzer targets
  llvm                              # llvm-dwarfdump: coverage builds' line maps
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libboost-dev libsqlite3-dev libgit2-dev
  libspdlog-dev libcurl4-openssl-dev
  zlib1g-dev                        # the dashboard's .tar.gz downloads
  graphviz                          # dot: the dashboard's module graphs
  python3-numpy                     # benchmarks and npy interop tests
  python3-aiosmtpd                  # the e-mail notification tests' SMTP sink
  bubblewrap                        # sandbox tier where namespaces fail
  e2fsprogs                         # mkfs.ext4: the builds' size-limited volume
)

trench_install_deps() {
  local missing=()
  for p in "${TRENCH_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "trench: installing ${missing[*]}"
    if [ "$(id -u)" != 0 ]; then
      echo "trench: missing packages and not root; run as root or install them" >&2
      return 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# trench_configure BUILD_DIR [cmake args...]: configures with Ninja and
# ccache, optimized without debug info (-O2: the tests run the simulator
# hard; no -g: a third less compile time, and ccache then shares objects
# between build directories, so build-target/ costs only its links). Later
# arguments override these defaults.
trench_configure() {
  local dir=$1
  shift
  export CCACHE_BASEDIR="$TRENCH_ROOT"
  export CCACHE_DIR="${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}"
  cmake -S "$TRENCH_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "$@" >/dev/null
}

TRENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TRENCH_JOBS="${TRENCH_JOBS:-$(nproc)}"
