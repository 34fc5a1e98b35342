// What `npm install` (or `npm run build:native`) built: the addon folder of each flavour and
// its build-info.json (llama.cpp release, the architectures it loads, its GPU backend).
// Reading it does not load the native binding.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { DeviceInfo } from '../contract/engine-types.js';
import { UNPACKED_ROOT } from '../paths.js';
import { capabilityNumber, cudaFlashAttnWithheld, type AttentionHeads } from './cuda-invariance.js';

/**
 * Every flavour scripts/build-native.mjs can build, in the order CPU work prefers them: cpu is
 * llama.cpp built from the bundle with our batch-invariance patches, cpu-prebuilt the
 * prebuilt package's libraries; vulkan is llama.cpp built from the bundle with its Vulkan backend.
 */
export const FLAVOUR_NAMES = ['cpu', 'cpu-prebuilt', 'cuda', 'cuda-src', 'vulkan'] as const;

export interface BuildInfo {
  flavour: string;
  platform: string;
  llamaCppRelease: string;
  architectures: string[];
  /** 'prebuilt' (node-llama-cpp's package) or 'source' (llama.cpp built here) */
  route?: string;
  /** with Flash Attention off, a verify pass computes each row exactly as a one-row decode */
  batchInvariant?: boolean;
  /**
   * the same with Flash Attention on (the patched CPU kernels, docs/exactness.md);
   * 'by-compute-capability': on the CUDA devices and models app/engine/cuda-invariance.ts says (cuda-src)
   */
  flashAttnBatchInvariant?: boolean | 'by-compute-capability';
  /** the claims above hold for a Mixture-of-Experts model's expert products (mul_mat_id) too */
  expertsBatchInvariant?: boolean;
  /** the widest verify pass (K + 1 rows) the claims above hold for; absent: any (the GPU patches compute up to this many rows one by one) */
  invariantVerifyRows?: number;
  /** an environment variable that, set, turns the flavour's batch-invariance patch off (the claims above then do not hold) */
  variantEnv?: string;
  /** our patches applied to llama.cpp's source before a from-source build */
  llamaPatches?: string[];
  /** the GPU backend the flavour carries, null for CPU-only */
  gpu?: 'cuda' | 'vulkan' | null;
  /** major version of the CUDA runtime the flavour's libggml-cuda needs */
  cudaMajor?: number | null;
  /** the targets whose graph hands its layer inputs to a draft artifact (read from the source; compiled into the addon too) */
  layerInputArchitectures?: string[];
}

/** The folder of a built addon flavour (power.node, its libraries, build-info.json). */
export function addonDir(flavour = 'cpu'): string {
  return join(UNPACKED_ROOT, 'build', `addon-${flavour}`);
}

function infoFile(flavour: string): string {
  return join(addonDir(flavour), 'build-info.json');
}

/** The flavours that are built, in FLAVOUR_NAMES order. */
export function builtFlavours(): BuildInfo[] {
  return FLAVOUR_NAMES.filter((f) => existsSync(infoFile(f)) && existsSync(join(addonDir(f), 'power.node'))).map((f) => readBuildInfo(f));
}

/** A flavour's build info; without a flavour, the first one built (they share one release). */
export function readBuildInfo(flavour?: string): BuildInfo {
  const name = flavour ?? FLAVOUR_NAMES.find((f) => existsSync(infoFile(f))) ?? 'cpu';
  const file = infoFile(name);
  if (!existsSync(file)) {
    throw new Error(`the native addon is not built (${file} is missing): run npm install`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as BuildInfo;
}

/**
 * Whether a session computes each verify row exactly as a one-row decode does: the flavour's
 * kernels for the Flash Attention setting llama.cpp settled on for that session ('unknown'
 * claims nothing), for a Mixture-of-Experts model (`experts`) its expert products too, for
 * verify passes of K + 1 rows (`k`: the session's K), and for cuda-src with Flash Attention on,
 * the CUDA devices' compute capabilities and the model's attention. The two Flash Attention
 * settings are claimed apart: CUDA's patch covers attention with Flash Attention only. The
 * cache layout is the same for every session (F16 K/V, one sequence, full-size sliding-window
 * cache: native/src/session.cpp), so it never takes the claim away.
 */
export function batchInvariance(flavour: string, run: InvarianceQuestion): boolean {
  return invarianceClaim(readBuildInfo(flavour), run).claimed;
}

/** batchInvariance with the reason when it is withheld. */
export function batchInvarianceClaim(flavour: string, run: InvarianceQuestion): InvarianceClaim {
  return invarianceClaim(readBuildInfo(flavour), run);
}

/** What a claim of batch invariance depends on besides the flavour. */
export interface InvarianceQuestion {
  flashAttn: 'on' | 'off' | 'unknown';
  /** the model has expert tensors (mul_mat_id) */
  experts: boolean;
  /** the session's K (0: no proposer, one-row passes only) */
  k: number;
  /** the CUDA devices the model runs on (what the engine reported: their compute capability) */
  cudaDevices?: readonly Pick<DeviceInfo, 'name' | 'description' | 'computeCapability'>[];
  /** the model's attention blocks (attentionHeads) */
  attention?: readonly AttentionHeads[];
  /** the environment the engine runs in (absent: this process's), where the flavour's variantEnv may turn its patch off */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A claim of batch invariance, or why it is withheld (what the front doors show). */
export interface InvarianceClaim {
  claimed: boolean;
  /** null when claimed */
  why: string | null;
}

type ClaimInfo = Pick<BuildInfo, 'batchInvariant' | 'flashAttnBatchInvariant' | 'expertsBatchInvariant' | 'invariantVerifyRows'> &
  Partial<Pick<BuildInfo, 'flavour' | 'variantEnv' | 'platform' | 'gpu'>>;

/**
 * The CPU architectures whose kernels, as Power's patches leave them, were run through
 * native/tools/kernel_rows.cpp and the model tests. Elsewhere (arm64: NEON, SVE, i8mm's two-row
 * dot products, KleidiAI) the same patches compile but no verify row was ever compared with its
 * decode, so a CPU build there claims nothing until one is.
 */
const CHECKED_CPU_ARCHS = ['x64'];

/** batchInvariance on a build info already read. */
export function claimsInvariance(info: ClaimInfo, run: InvarianceQuestion): boolean {
  return invarianceClaim(info, run).claimed;
}

const CLAIMED: InvarianceClaim = { claimed: true, why: null };
const withheld = (why: string): InvarianceClaim => ({ claimed: false, why });

/** Why the per-capability Flash Attention claim fails on one of the devices (null: it holds on all). */
function cudaWithheld(run: InvarianceQuestion): string | null {
  const devices = run.cudaDevices ?? [];
  if (devices.length === 0) return 'no CUDA device was reported for the model';
  for (const d of devices) {
    const why = cudaFlashAttnWithheld(capabilityNumber(d.computeCapability), run.attention ?? []);
    if (why) return `${d.name} (${d.description}), ${why}`;
  }
  return null;
}

/** claimsInvariance with the reason when it is withheld. */
export function invarianceClaim(info: ClaimInfo, run: InvarianceQuestion): InvarianceClaim {
  const flavour = `the ${info.flavour ?? 'engine'} flavour`;
  const { flashAttn, experts, k } = run;
  if (info.variantEnv !== undefined && (run.env ?? process.env)[info.variantEnv] !== undefined) {
    return withheld(
      `${info.variantEnv} is set: ${flavour} runs the released kernels, whose verify passes are not computed as one-row decodes`,
    );
  }
  const arch = info.platform?.split('-').pop();
  if (!info.gpu && arch !== undefined && !CHECKED_CPU_ARCHS.includes(arch)) {
    return withheld(
      `${flavour} was built for ${info.platform}: its CPU kernels were checked row by row against one-row decodes on x86-64 only, never on ${arch}`,
    );
  }
  if (experts && info.expertsBatchInvariant !== true) {
    return withheld(`${flavour} does not compute a Mixture-of-Experts model's expert products (mul_mat_id) row by row as a decode does`);
  }
  if (info.invariantVerifyRows !== undefined && k + 1 > info.invariantVerifyRows) {
    const most = info.invariantVerifyRows - 1;
    return withheld(
      `K ${k}: ${flavour} computes verify passes as one-row decodes up to K ${most} (${info.invariantVerifyRows} rows); wider ones keep the released kernels`,
    );
  }
  if (flashAttn === 'unknown') return withheld('llama.cpp did not say whether Flash Attention is on');
  const onWithheld =
    info.flashAttnBatchInvariant === true
      ? null
      : info.flashAttnBatchInvariant === 'by-compute-capability'
        ? cudaWithheld(run)
        : `${flavour}'s kernels are not batch-invariant with Flash Attention on`;
  if (flashAttn === 'off') {
    if (info.batchInvariant === true) return CLAIMED;
    return withheld(
      `${flavour}'s kernels are not batch-invariant with Flash Attention off` +
        (onWithheld === null ? '; with --flash-attn on they are' : ''),
    );
  }
  if (onWithheld === null) return CLAIMED;
  if (info.batchInvariant === true) return withheld(`${onWithheld}; with --flash-attn off they are`);
  return withheld(
    info.flashAttnBatchInvariant === 'by-compute-capability'
      ? `${onWithheld}; the claim is withheld with Flash Attention on, and ${flavour} claims nothing with it off: for exact speculation on this GPU run --device vulkan --flash-attn off, or --device cpu`
      : onWithheld,
  );
}
