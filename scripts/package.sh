#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages (docs/install.md, "Debian packages"): build DIR as
# the main job does (configuring it first if it is not yet), then CPack's
# .debs into DIR/packages: memscribe and memscribe-windows, their Depends
# found by dpkg-shlibdeps. Prints the packages' paths on stdout.
# Usage: scripts/package.sh [DIR]    (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
# The build's chatter to stderr: stdout is the packages' list.
if [ -f "$dir/CMakeCache.txt" ]; then
  cmake --build "$dir" -j"$(nproc)" >&2
else
  bash scripts/build.sh "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
rm -rf "$dir/packages"
if ! cpack --config "$dir/CPackConfig.cmake" -B "$dir/packages" > "$dir/cpack.log" 2>&1; then
  cat "$dir/cpack.log" >&2
  echo "package: cpack failed (output above, also in $dir/cpack.log)" >&2
  exit 1
fi
# CPack's staging trees: not packages.
rm -rf "$dir/packages/_CPack_Packages"
ls "$dir"/packages/*.deb
