#!/usr/bin/env bash
# Install the benchmark peers into a cache directory outside the repository (never committed):
#
#   Codex apply_patch   npm @openai/codex  -> $CACHE/codex/apply_patch (a symlink to the Rust binary)
#   OpenHands editor    PyPI openhands-aci -> $CACHE/openhands/site   (the 3.12 wheel unzipped; see
#                                                                      benchmarks/peers/openhands.py)
#   plot + profiler     matplotlib, pyinstrument (pip, into the current Python)
#
# The runner finds them in the same cache (default ~/.cache/vfs-bench, or $VFS_BENCH_CACHE), or at
# $VFS_BENCH_CODEX (the apply_patch binary) and $VFS_BENCH_OPENHANDS (a directory holding the
# unzipped openhands_aci package). Usage: bash benchmarks/install_peers.sh [codex|openhands|python]...
set -euo pipefail

CACHE="${VFS_BENCH_CACHE:-$HOME/.cache/vfs-bench}"
PYTHON="${PYTHON:-python}"
CODEX_VERSION="${VFS_BENCH_CODEX_VERSION:-latest}"
OPENHANDS_VERSION="${VFS_BENCH_OPENHANDS_VERSION:-0.3.3}"
mkdir -p "$CACHE"

install_codex() {
    local dir="$CACHE/codex"
    mkdir -p "$dir"
    if [ ! -f "$dir/package.json" ]; then
        printf '{"name": "vfs-bench-peers", "private": true}\n' > "$dir/package.json"
    fi
    echo "[codex] npm install @openai/codex@$CODEX_VERSION into $dir (about 420 MB)"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/codex@$CODEX_VERSION"
    local binary
    binary="$(find "$dir/node_modules" -path '*x86_64-unknown-linux-musl/bin/codex' -type f 2>/dev/null | head -n 1)"
    if [ -z "$binary" ]; then
        binary="$(find "$dir/node_modules" -path '*/vendor/*/bin/codex' -type f 2>/dev/null | head -n 1)"
    fi
    if [ -z "$binary" ]; then
        echo "[codex] the codex binary was not found under $dir/node_modules" >&2
        return 1
    fi
    # Codex dispatches on argv[0]: called as apply_patch it is the standalone apply_patch tool.
    ln -sf "$binary" "$dir/apply_patch"
    echo "[codex] $dir/apply_patch -> $binary"
}

install_openhands() {
    local dir="$CACHE/openhands"
    local wheels="$dir/wheels"
    local site="$dir/site"
    mkdir -p "$wheels"
    echo "[openhands] pip download openhands-aci==$OPENHANDS_VERSION (the py3.12 wheel, no deps)"
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
        --dest "$wheels" "openhands-aci==$OPENHANDS_VERSION"
    rm -rf "$site"
    mkdir -p "$site"
    "$PYTHON" - "$wheels" "$site" <<'EOF'
import glob, sys, zipfile
wheels, site = sys.argv[1], sys.argv[2]
wheel = sorted(glob.glob(f"{wheels}/openhands_aci-*.whl"))[-1]
zipfile.ZipFile(wheel).extractall(site)
print(f"[openhands] unzipped {wheel} -> {site}")
EOF
    echo "[openhands] pip install its light runtime dependencies"
    "$PYTHON" -m pip install --quiet binaryornot charset-normalizer cachetools pydantic
}

install_python_tools() {
    echo "[python] pip install matplotlib pyinstrument (plot and profiler)"
    "$PYTHON" -m pip install --quiet matplotlib pyinstrument
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(codex openhands python)
fi
for target in "${targets[@]}"; do
    case "$target" in
        codex) install_codex ;;
        openhands) install_openhands ;;
        python) install_python_tools ;;
        *) echo "unknown target $target (codex, openhands, python)" >&2; exit 2 ;;
    esac
done
echo "peers installed under $CACHE"
