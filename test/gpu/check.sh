#!/usr/bin/env bash
# GPU check for a machine with an NVIDIA GPU and no network (npm ci already done there):
#   test/gpu/check.sh OUT_DIR [--device cuda|cpu] [--scale full|small] [--threads N]
# Builds what is missing (TypeScript, the CUDA addon flavour), writes larger synthetic models,
# runs the exactness contract and the AR vs K7/S7 vs K7/S6 speed comparison on CUDA, with two or
# more cards the layer and row splits (tensor split 1:1 and 3:1, memory per card), and
# writes OUT_DIR/summary.md (plus raw JSON). Budget: under 8 minutes.
# --device cpu runs the parts that need no GPU (small models) and marks the rest SKIPPED.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -lt 1 ] || [[ "$1" == --* ]]; then
  echo "usage: test/gpu/check.sh OUT_DIR [--device cuda|cpu] [--scale full|small] [--threads N]" >&2
  exit 2
fi
[ -d node_modules ] || { echo "gpu check: run npm ci first (node_modules is missing)" >&2; exit 2; }

# build only what is missing: the machine has no network, and a rebuild costs minutes
[ -f dist/main/cli/power.js ] || npm run --silent build
if [ -d "node_modules/@node-llama-cpp/linux-x64-cuda" ] && [ ! -f build/addon-cuda/power.node ]; then
  node scripts/build-native.mjs --flavour cuda
fi
[ -f build/addon-cpu/power.node ] || node scripts/build-native.mjs --flavour cpu

exec node --import tsx test/gpu/check.ts "$@"
