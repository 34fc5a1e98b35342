#!/usr/bin/env bash
# The borrowed-machine GPU check (docs/testing.md "The borrowed-machine GPU check"): one command
# for a machine with an NVIDIA GPU, nvcc, CMake and ninja, and no network or Node.js. Builds
# native/checker (Power's engine without N-API on llama.cpp from gpu-check/llama.cpp, which
# `node scripts/pack-gpu-check.mjs` packs on a machine with the repository's node_modules) and
# runs it: exactness, the audit's row comparison and decode speed, one JSON summary.
#
#   bash test/gpu/native-check.sh OUT_DIR [--device cuda|cpu] [--cuda-arch 90] [--jobs N]
#        [--all-cuda-kernels] [--budget SECONDS] [--compare-released SECONDS] [--as-cc CC SECONDS]
#        [--no-llama-spec] [checker options: --tokens N --scale small|full --user-speed user|small
#        --weights f16,q8_0,q6_k,q4_k_m --ks 1,7,31,32,64 --chains ngram+draft-model ...]
#
# OUT_DIR gets summary.json (also printed on stdout), build.log and check.log; the build and the
# models (about 2.5 GB at full scale) go to $POWER_CHECK_WORK (default /tmp/power-native-check),
# not to OUT_DIR. The whole run, build included, is kept within --budget (default 480 s): the
# checker skips what would not finish in time, and says so. --compare-released S runs the checker
# a second time, within S more seconds, with GGML_CUDA_BATCH_VARIANT=1 (the release's kernel
# choices instead of the batch-invariant ones of ggml-cuda-verify-rows-as-decode.patch): its
# summary, released.json and released.log, gives the released kernels' exactness and speed.
# --as-cc CC S runs it once more, within S more seconds, with POWER_CUDA_AS_CC=CC (e.g. 860: Flash
# Attention's kernel choice as on Ampere, docs/exactness.md "The claim per architecture"): as-cc.json
# and as-cc.log.
# With the checker's --user-speed user|small (the user-size speed step: an 8B-class Q4_K_M target,
# its 1B-class draft and a Qwen3.5-shaped hybrid, written on the machine) the build adds llama.cpp's
# llama-speculative-simple from the same source, and the checker runs it and, in a child process,
# itself with the released kernels: OUT_DIR/user-speed.{json,md}, user-llama.log,
# user-released.log. --no-llama-spec leaves llama.cpp's arm out (and its build).
# Exit: the checker's (0 ok, 1 a case failed or was skipped, 2 the check could not run).
set -uo pipefail

started=$(date +%s.%N)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-}
if [[ -z "$out" || "$out" == --* ]]; then
  echo "usage: bash test/gpu/native-check.sh OUT_DIR [--device cuda|cpu] [--cuda-arch N] [--jobs N] [--all-cuda-kernels] [--budget S] [--compare-released S] [--as-cc CC S] [checker options]" >&2
  exit 2
fi
shift
device=cuda
cuda_arch=""
jobs=$(nproc 2>/dev/null || echo 2)
all_kernels=0
budget=480
released=0
as_cc=""
as_cc_seconds=0
llama_spec=1
user_speed=0
checker_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device=${2:?--device needs cuda or cpu}; shift 2 ;;
    --cuda-arch) cuda_arch=${2:?--cuda-arch needs a value}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
    --all-cuda-kernels) all_kernels=1; shift ;;
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --compare-released) released=${2:?--compare-released needs seconds}; shift 2 ;;
    --as-cc) as_cc=${2:?--as-cc needs a capability}; as_cc_seconds=${3:?--as-cc needs seconds}; shift 3 ;;
    --no-llama-spec) llama_spec=0; shift ;;
    --user-speed) user_speed=1; checker_args+=("$1" "${2:?--user-speed needs user or small}"); shift 2 ;;
    *) checker_args+=("$1"); shift ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=${POWER_CHECK_WORK:-/tmp/power-native-check}
mkdir -p "$work"
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[native-check $(elapsed) s] $*" >&2; }

# a summary that says why the check could not run, in the checker's shape
fail() {
  local why=$1
  local esc=${why//\\/\\\\}
  esc=${esc//\"/\\\"}
  printf '{\n  "check": "power native GPU check (native/checker, test/gpu/native-check.sh)",\n  "ok": false,\n  "device": {"requested": "%s"},\n  "error": "%s",\n  "seconds": %s\n}\n' \
    "$device" "$esc" "$(elapsed)" | tee "$out/summary.json"
  log "error: $why"
  exit 2
}

[[ "$device" == cuda || "$device" == cpu ]] || fail "--device must be cuda or cpu (got '$device')"
# the pack: gpu-check/ in the repository, or $POWER_CHECK_PACK (a test's own pack)
pack=${POWER_CHECK_PACK:-$root/gpu-check}
src="$pack/llama.cpp"
[[ -f "$src/include/llama.h" && -f "$pack/MANIFEST.json" ]] ||
  fail "gpu-check/llama.cpp is missing: run 'node scripts/pack-gpu-check.mjs' in the repository first (it needs node_modules) and send gpu-check/ with the working tree (the device tool: carry [\"gpu-check\"])"
command -v cmake >/dev/null || fail "cmake is not installed"
command -v c++ >/dev/null || command -v g++ >/dev/null || fail "no C++ compiler (c++ or g++)"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); else log "ninja not found: using make"; fi

[[ -f "$pack/layer-input-archs.txt" ]] || fail "gpu-check/layer-input-archs.txt is missing: pack again with 'node scripts/pack-gpu-check.mjs'"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_SRC_DIR="$src" -DPOWER_LAYER_INPUT_ARCHS="$(cat "$pack/layer-input-archs.txt")")
if [[ "$device" == cuda ]]; then
  nvcc=${CUDACXX:-}
  if [[ -z "$nvcc" ]]; then
    nvcc=$(command -v nvcc || true)
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [[ -z "$nvcc" && -x "$d/nvcc" ]] && nvcc="$d/nvcc"
    done
  fi
  [[ -n "$nvcc" && -x "$nvcc" ]] || fail "--device cuda needs nvcc (PATH, CUDACXX or /usr/local/cuda*/bin)"
  # what ggml-cuda links besides nvcc: cuBLAS (headers and library)
  top=$(cd "$(dirname "$nvcc")/.." && pwd)
  if ! ls "$top"/include/cublas_v2.h "$top"/targets/*/include/cublas_v2.h >/dev/null 2>&1; then
    fail "the CUDA toolkit in $top has no cuBLAS headers (cublas_v2.h), which ggml's CUDA backend needs"
  fi
  if [[ -z "$cuda_arch" ]] && command -v nvidia-smi >/dev/null; then
    # one architecture, this GPU's ("9.0" -> 90)
    cuda_arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  fi
  [[ -n "$cuda_arch" ]] || cuda_arch=native
  # device code for this architecture only (no PTX for a JIT on later ones)
  [[ "$cuda_arch" =~ ^[0-9]+$ ]] && cuda_arch="${cuda_arch}-real"
  cmake_args+=(-DPOWER_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch")
  log "CUDA: $("$nvcc" --version | grep -o 'release [0-9.]*'), architecture $cuda_arch, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
fi
if [[ "$device" == cuda && "$all_kernels" == 1 ]]; then
  # every CUDA kernel of the release: a copy of the tree with the untrimmed template instances
  log "copying the tree with every CUDA template instance (--all-cuda-kernels)"
  rm -rf "$work/llama-all"
  cp -r "$src" "$work/llama-all"
  rm -f "$work/llama-all/ggml/src/ggml-cuda/template-instances/"*.cu
  cp "$pack/cuda-instances-all/"* "$work/llama-all/ggml/src/ggml-cuda/template-instances/"
  cmake_args+=(-DLLAMA_SRC_DIR="$work/llama-all")
  build="$work/build-$device-all"
else
  build="$work/build-$device"
fi
# a build folder of its own (a rehearsal that reuses one)
build=${POWER_CHECK_BUILD:-$build}

targets=(power-gpu-check)
if [[ "$user_speed" == 1 && "$llama_spec" == 1 ]]; then
  # llama.cpp's own speculative loop for the user-size step, built alongside (same ggml, same libllama)
  cmake_args+=(-DPOWER_LLAMA_SPEC=ON)
  targets+=(llama-speculative-simple)
fi
log "configuring native/checker in $build ($jobs jobs)"
build_started=$(date +%s.%N)
if ! cmake -S "$root/native/checker" -B "$build" "${generator[@]}" "${cmake_args[@]}" >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  fail "cmake configuration failed (OUT_DIR/build.log)"
fi
if ! cmake --build "$build" --target "${targets[@]}" --parallel "$jobs" >>"$out/build.log" 2>&1; then
  # the checker alone, should llama-speculative-simple be what failed: its arm is then left out
  if [[ ${#targets[@]} -gt 1 ]] && cmake --build "$build" --target power-gpu-check --parallel "$jobs" >>"$out/build.log" 2>&1; then
    log "llama-speculative-simple did not build (OUT_DIR/build.log): the user-size step runs without llama.cpp's arm"
    targets=(power-gpu-check)
  else
    grep -E "error|Error" "$out/build.log" | head -30 >&2
    fail "the build failed (OUT_DIR/build.log)"
  fi
fi
if [[ "$user_speed" == 1 ]]; then
  # the released kernels' arms in a child of the checker (the patch reads GGML_CUDA_BATCH_VARIANT once)
  checker_args+=(--user-released)
  [[ ${#targets[@]} -gt 1 ]] && checker_args+=(--llama-spec "$build/llama-speculative-simple")
fi
build_seconds=$(awk -v a="$build_started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
log "built in $build_seconds s"

# what is left of the budget, with a margin for writing the summary
deadline=$(awk -v b="$budget" -v e="$(elapsed)" 'BEGIN { d = b - e - 10; if (d < 30) d = 30; printf "%.0f", d }')
log "running power-gpu-check --device $device (deadline ${deadline} s)"
"$build/power-gpu-check" --device "$device" --out "$out/summary.json" --models "$work/models" \
  --build-seconds "$build_seconds" --deadline "$deadline" "${checker_args[@]}" 2> >(tee "$out/check.log" >&2)
rc=$?
wait
log "finished with exit $rc in $(elapsed) s (build $build_seconds s)"
if [[ "$released" != 0 ]]; then
  log "running power-gpu-check again with the released kernel choices (GGML_CUDA_BATCH_VARIANT=1, deadline $released s)"
  GGML_CUDA_BATCH_VARIANT=1 "$build/power-gpu-check" --device "$device" --out "$out/released.json" --models "$work/models" \
    --build-seconds "$build_seconds" --deadline "$released" "${checker_args[@]}" 2>"$out/released.log"
  log "released kernels: exit $? in $(elapsed) s"
fi
if [[ -n "$as_cc" ]]; then
  log "running power-gpu-check again as compute capability $as_cc (POWER_CUDA_AS_CC, deadline $as_cc_seconds s)"
  POWER_CUDA_AS_CC="$as_cc" "$build/power-gpu-check" --device "$device" --out "$out/as-cc.json" --models "$work/models" \
    --build-seconds "$build_seconds" --deadline "$as_cc_seconds" "${checker_args[@]}" 2>"$out/as-cc.log"
  log "as compute capability $as_cc: exit $? in $(elapsed) s"
fi
exit $rc
