#!/bin/bash
# The workers scenario on a many-core node without bun (e.g. a GPU node lent for a measurement): run from the repo
# root after bench/device/prepare.sh, with .devcarry/ beside the tree. The compiled binary runs the harness as bun
# (BUN_BE_BUN=1); the C emitter is prebuilt (static). Results go to $OUT (or /tmp/out).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR" dist
[ -d node_modules ] || cp -r .devcarry/node_modules node_modules
if command -v xz >/dev/null; then xz -dc .devcarry/warmbench.xz > dist/warmbench
else python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.devcarry/warmbench.xz'), open('dist/warmbench','wb'))"; fi
chmod +x dist/warmbench .devcarry/emitter
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"; free -g | head -2; uptime; } > "$OUTDIR/machine.txt" 2>&1
cat "$OUTDIR/machine.txt"
export WARMBENCH_EMITTER_BIN=$ROOT/.devcarry/emitter
BUN_BE_BUN=1 timeout 470 dist/warmbench bench/run.ts --only workers --no-python --bin dist/warmbench > "$OUTDIR/bench.log" 2>&1
echo "rc=$?" >> "$OUTDIR/bench.log"
tail -40 "$OUTDIR/bench.log"
cp bench/results/workers.json "$OUTDIR/" 2>/dev/null
exit 0
