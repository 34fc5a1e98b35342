#!/usr/bin/env bash
# The system packages Power's build and tests need on Debian or Ubuntu, installed where missing:
# a C++ toolchain, cmake, ninja and git (llama.cpp and the addon are built here from the bundle),
# clang-format (npm run lint checks the C++ formatting), glslc, the Vulkan and SPIR-V headers and the loader
# (npm install then builds the vulkan flavour too) with Mesa's lavapipe (a Vulkan device that
# runs on the CPU: the tests run the Vulkan engine on it),
# and Debian's Chromium (power bench prints its PDF with it; the report and UI tests drive it;
# playwright-core never downloads a browser). Run as root (or with sudo); .ci/run calls it.
set -euo pipefail

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v git >/dev/null || need+=(git)
command -v ninja >/dev/null || need+=(ninja-build)
command -v clang-format >/dev/null || need+=(clang-format)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v glslc >/dev/null || need+=(glslc)
[ -f /usr/include/vulkan/vulkan.hpp ] || need+=(libvulkan-dev)
# ggml-vulkan's cmake asks for the SPIR-V headers' package configuration
[ -f /usr/share/cmake/SPIRV-Headers/SPIRV-HeadersConfig.cmake ] || need+=(spirv-headers)
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
if [ ${#need[@]} -eq 0 ]; then
  echo "setup-system: everything is installed"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "setup-system: missing ${need[*]}; this script knows apt-get only: install them with your package manager" >&2
  exit 1
fi
echo "setup-system: installing ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
