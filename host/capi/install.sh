#!/usr/bin/env bash
# Installs wloc's C library into DIR as hwloc 2.x's libhwloc.so.15 (for
# programs built against hwloc, through LD_LIBRARY_PATH=DIR or a system
# library folder) and as libwloc.so (for programs that link it on
# purpose), with its discovery module libwloc_discover.so beside it (the
# library loads it from its own folder, and only to discover a machine)
# and DIR/pkgconfig/hwloc.pc pointing at the system's hwloc 2.9 headers
# (Debian's libhwloc-dev).
# usage: host/capi/install.sh DIR
set -euo pipefail
dir=${1:?usage: host/capi/install.sh DIR}
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release -p wloc-capi
cargo build --release -p wloc-discover
mkdir -p "$dir/pkgconfig"
dir=$(cd "$dir" && pwd)
install -m 0755 "$target/release/libhwloc.so" "$dir/libwloc.so"
# A regular file, not a link: the library refuses a module that is a link,
# or that anyone but root or the process's user may change.
install -m 0755 "$target/release/libwloc_discover.so" "$dir/libwloc_discover.so"
ln -sf libwloc.so "$dir/libhwloc.so.15"
ln -sf libhwloc.so.15 "$dir/libhwloc.so"
cat > "$dir/pkgconfig/hwloc.pc" <<PC
prefix=/usr
libdir=$dir
includedir=\${prefix}/include

Name: hwloc
Description: wloc's libhwloc (hwloc 2.9 API and ABI)
Version: 2.9.0
Cflags: -I\${includedir}
Libs: -L\${libdir} -lhwloc
PC
echo "installed in $dir: LD_LIBRARY_PATH=$dir runs hwloc programs on wloc; PKG_CONFIG_PATH=$dir/pkgconfig builds against it"
