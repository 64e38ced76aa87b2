#!/usr/bin/env bash
# Install the DSH str_replace_editor (npm @deepseek-ai/dsh-tool-str-replace-editor and its 20 small
# dependencies, a few seconds) into the benchmark cache, outside the repository:
#   $VFS_BENCH_CACHE/dsh/node_modules (default ~/.cache/vfs-bench/dsh/node_modules)
# The replay benchmark finds it there, or at $VFS_BENCH_DSH (a node_modules directory holding it).
# Codex and OpenHands: bash benchmarks/install_peers.sh. Usage: bash benchmarks/replay/install_dsh.sh
set -euo pipefail
CACHE="${VFS_BENCH_CACHE:-$HOME/.cache/vfs-bench}"
VERSION="${VFS_BENCH_DSH_VERSION:-0.1.0-rc.8}"
dir="$CACHE/dsh"
mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
    printf '{"name": "vfs-bench-dsh", "private": true}\n' > "$dir/package.json"
fi
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@deepseek-ai/dsh-tool-str-replace-editor@$VERSION"
echo "[dsh] installed under $dir/node_modules"
