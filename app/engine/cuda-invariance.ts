// Where the cuda-src flavour's batch-invariance claim holds with Flash Attention on, by the
// device's compute capability and the model's attention. The CUDA patch
// (scripts/native/patches/ggml-cuda-verify-rows-as-decode.patch, docs/exactness.md "CUDA") makes
// the 2–32 rows of a verify pass take the kernel a one-row decode takes only where that kernel
// is a vector kernel: for every 2D matrix product it is (mmvf, mmvq, or the one-column dispatch
// column by column, on every architecture), but for Flash Attention ggml-cuda
// (`ggml_cuda_get_best_fattn_kernel`) gives a one-row decode the vector kernel only for heads of
// 64, 128 or 256 (K and V alike), and the patch's choices were examined from Turing on (where it
// also moves a one-row decode with grouped-query attention from the tensor-core kernel to the
// vector one); elsewhere the decode and the verify rows both take the tile or tensor-core kernels,
// whose summation order changes with the number of rows. Pure: the table is unit-tested per capability.
import type { GgufInfo } from '../gguf/types.js';
import { hp } from './memory-estimate.js';

/** One kind of attention block of a model, as ggml-cuda's Flash Attention dispatch tells them apart. */
export interface AttentionHeads {
  keyHead: number;
  valueHead: number;
}

/** ggml's number for a capability (100 × major + 10 × minor) from "8.6"; null when absent or malformed. */
export function capabilityNumber(cc: string | undefined): number | null {
  const m = /^(\d+)\.(\d)$/.exec(cc ?? '');
  return m ? Number(m[1]) * 100 + Number(m[2]) * 10 : null;
}

/** "Ampere (sm_86)" for 860. */
export function cudaArchitecture(cc: number): string {
  const sm = `sm_${Math.floor(cc / 100)}${(cc % 100) / 10}`;
  const name =
    cc >= 1300
      ? 'newer than Blackwell'
      : cc === 1210
        ? 'Blackwell GB10'
        : cc >= 1000
          ? 'Blackwell'
          : cc >= 900
            ? 'Hopper'
            : cc >= 890
              ? 'Ada Lovelace'
              : cc >= 800
                ? 'Ampere'
                : cc >= 750
                  ? 'Turing'
                  : cc >= 700
                    ? 'Volta'
                    : cc >= 600
                      ? 'Pascal'
                      : 'older than Pascal';
  return `${name} (${sm})`;
}

/** The head sizes the vector Flash Attention kernel has (K and V the same). */
const VECTOR_HEADS = [64, 128, 256];
/** Below it the patch's choices were not examined (no tensor-core Flash Attention: other branches). */
const TURING = 750;

/** The distinct attention shapes of a model's attention blocks (recurrent blocks have none). */
export function attentionHeads(info: GgufInfo): AttentionHeads[] {
  const blocks = hp(info, 'block_count') ?? 0;
  const embd = hp(info, 'embedding_length') ?? 0;
  const shapes = new Map<string, AttentionHeads>();
  const add = (s: AttentionHeads) => shapes.set(`${s.keyHead}/${s.valueHead}`, s);
  const windowed = (hp(info, 'attention.sliding_window') ?? 0) > 0;
  for (let i = 0; i < blocks; i++) {
    const heads = hp(info, 'attention.head_count', i) ?? 0;
    const kvHeads = hp(info, 'attention.head_count_kv', i) ?? heads;
    if (heads <= 0 || kvHeads <= 0) continue;
    const keyHead = hp(info, 'attention.key_length', i) ?? embd / heads;
    const valueHead = hp(info, 'attention.value_length', i) ?? keyHead;
    add({ keyHead, valueHead });
    // sliding-window blocks may have heads of their own size
    if (windowed) {
      const keySwa = hp(info, 'attention.key_length_swa', i);
      if (keySwa !== undefined) add({ keyHead: keySwa, valueHead: hp(info, 'attention.value_length_swa', i) ?? keySwa });
    }
  }
  return [...shapes.values()];
}

/**
 * Why the patched CUDA kernels do not compute a verify row as its one-row decode with Flash
 * Attention on, for a device of capability `cc` (ggml's number; null: not reported) and a model
 * with these attention shapes; null where they do.
 */
export function cudaFlashAttnWithheld(cc: number | null, shapes: readonly AttentionHeads[]): string | null {
  if (cc === null) {
    return "the engine did not report the CUDA device's compute capability, which decides the kernels (an engine built before it did: rebuild it with npm run build:native)";
  }
  const arch = cudaArchitecture(cc);
  if (cc < TURING) return `${arch}: the patch's Flash Attention choices below Turing (sm_75) were not examined`;
  const noVector = shapes.find((s) => s.keyHead !== s.valueHead || !VECTOR_HEADS.includes(s.keyHead));
  if (noVector) {
    const heads = noVector.keyHead === noVector.valueHead ? `${noVector.keyHead}` : `${noVector.keyHead} (K) and ${noVector.valueHead} (V)`;
    return (
      `${arch}: the vector Flash Attention kernel has no heads of ${heads} (it has 64, 128 and 256), so a one-row decode ` +
      'and the verify rows take the tile or tensor-core kernels, which sum a row in another order as the number of rows changes'
    );
  }
  return null;
}

/** What the per-capability claim is on a device, whatever the model (`power devices`). */
export function cudaDeviceClaim(cc: number | null): string {
  const why = cudaFlashAttnWithheld(cc, [{ keyHead: 128, valueHead: 128 }]);
  return why === null
    ? 'batch-invariant with Flash Attention on for models with heads of 64, 128 or 256 (not with it off)'
    : `not batch-invariant: ${why}`;
}
