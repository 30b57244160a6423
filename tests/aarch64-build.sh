#!/usr/bin/env bash
# The aarch64 cross build that tests/aarch64_host.rs runs: wloc, its C
# library and the library's discovery module for aarch64-unknown-linux-gnu,
# in one cargo run (one feature resolution: wasmtime compiles once for the
# three) with the `cross-test` profile (Cargo.toml), linked by Debian's
# gcc-aarch64-linux-gnu.  The test runs this script, and .ci/run starts it
# in the background at its beginning so that the build overlaps the x86_64
# one; the test then finds it done.  Both must run it with the same
# environment for cargo to find it fresh: the guest components come from
# WLOC_WASM_TARGET_DIR when it is set.
#
# Usage: tests/aarch64-build.sh TARGET_DIR
# Installs what the build needs when it is missing (as root): the Rust
# target, gcc-aarch64-linux-gnu and the aarch64 C library's headers (for
# the crates that compile C, such as zstd-sys; the compiler does not
# depend on them).
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${1:?usage: tests/aarch64-build.sh TARGET_DIR}
target=aarch64-unknown-linux-gnu
linker=/usr/bin/aarch64-linux-gnu-gcc

need=()
[ -x "$linker" ] || need+=(gcc-aarch64-linux-gnu)
[ -f /usr/aarch64-linux-gnu/include/bits/libc-header-start.h ] || need+=(libc6-dev-arm64-cross)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "the aarch64 build needs Debian packages: apt-get install ${need[*]} (as root)" >&2
    exit 1
  fi
  # The tests' installer (tests/common/packages.rs) takes the same lock.
  lock="${TMPDIR:-/tmp}/wloc-tests-apt.lock"
  install() {
    DEBIAN_FRONTEND=noninteractive flock "$lock" apt-get -o DPkg::Lock::Timeout=600 \
      install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  }
  install || { flock "$lock" apt-get -qq update >/dev/null && install; } || {
    echo "apt-get install ${need[*]} failed; is the package registry reachable?" >&2
    exit 1
  }
fi
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/$target" ]; then
  rustup target add "$target"
fi
exec env -u CARGO_TARGET_DIR CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$linker" \
  "${CARGO:-cargo}" build --profile cross-test --target "$target" \
  -p wloc -p wloc-capi -p wloc-discover --target-dir "$target_dir"
