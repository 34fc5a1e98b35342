// A short built-in list of target + proposer pairs that work well with exact speculative
// decoding, with where to download them. Plain data: nothing here is fetched by Power on its own
// (the user picks one to download) and no test reaches these URLs. Sizes and checksums are not
// pinned because the publishers can re-upload; a download is still checked as a GGUF (header and
// the server's length), and a checksum is checked when one is given.
import { z } from 'zod';

import { K_MAX } from './profile.js';
import { STRATEGIES } from './strategies.js';

export const RecommendedFile = z.object({
  /** the file name it is saved under in the library folder */
  fileName: z.string().regex(/^[^/\\]+\.gguf$/),
  url: z.url({ protocol: /^https$/ }),
  /** approximate size, for the UI before the download starts */
  approxBytes: z.number().int().positive(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
});
export type RecommendedFile = z.infer<typeof RecommendedFile>;

export const RecommendedPair = z.object({
  id: z.string().min(1),
  title: z.string(),
  /** why this pair: what the proposer is and what it needs */
  note: z.string(),
  strategy: z.enum(STRATEGIES),
  target: RecommendedFile,
  /** the draft model (draft-model), null when the target drafts for itself (mtp) */
  draft: RecommendedFile.nullable(),
  /** the profile to start with */
  k: z.number().int().min(1).max(K_MAX),
  s: z.number().int().min(0).max(K_MAX).nullable(),
  /** where the files come from (the model card) */
  source: z.url(),
});
export type RecommendedPair = z.infer<typeof RecommendedPair>;

const GB = 1e9;

export const RECOMMENDED_PAIRS: readonly RecommendedPair[] = [
  {
    id: 'qwen3.5-4b-mtp',
    title: 'Qwen3.5 4B (hybrid, MTP layer) Q4_K_M',
    note: 'GatedDeltaNet + attention hybrid with its own NextN/MTP layer: no draft file; S matters (recurrent state)',
    strategy: 'mtp',
    target: {
      fileName: 'Qwen3.5-4B-MTP-Q4_K_M.gguf',
      url: 'https://huggingface.co/localweights/Qwen3.5-4B-MTP-Q4_K_M-GGUF/resolve/main/Qwen3.5-4B-MTP-Q4_K_M.gguf',
      approxBytes: 2.7 * GB,
      sha256: null,
    },
    draft: null,
    k: 3,
    s: 3,
    source: 'https://huggingface.co/localweights/Qwen3.5-4B-MTP-Q4_K_M-GGUF',
  },
  {
    id: 'qwen3.6-35b-a3b-mtp',
    title: 'Qwen3.6 35B-A3B (MoE hybrid, MTP layer) IQ4_XS',
    note: 'mixture of experts, 3B active per token, NextN/MTP layer kept at Q8_0; needs about 20 GiB of GPU memory',
    strategy: 'mtp',
    target: {
      fileName: 'Qwen3.6-35B-A3B-MTP-IQ4_XS.gguf',
      url: 'https://huggingface.co/localweights/Qwen3.6-35B-A3B-MTP-IQ4_XS-GGUF/resolve/main/Qwen3.6-35B-A3B-MTP-IQ4_XS.gguf',
      approxBytes: 18.5 * GB,
      sha256: null,
    },
    draft: null,
    k: 3,
    s: 3,
    source: 'https://huggingface.co/localweights/Qwen3.6-35B-A3B-MTP-IQ4_XS-GGUF',
  },
  {
    id: 'llama-3.1-8b+3.2-1b',
    title: 'Llama 3.1 8B Instruct + Llama 3.2 1B Instruct draft, Q4_K_M',
    note: 'attention-only target (S does not apply) with a 1B draft of the same 128k vocabulary',
    strategy: 'draft-model',
    target: {
      fileName: 'Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf',
      url: 'https://huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF/resolve/main/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf',
      approxBytes: 4.92 * GB,
      sha256: null,
    },
    draft: {
      fileName: 'Llama-3.2-1B-Instruct-Q4_K_M.gguf',
      url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
      approxBytes: 0.81 * GB,
      sha256: null,
    },
    k: 7,
    s: null,
    source: 'https://huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF',
  },
  {
    id: 'qwen3-8b+0.6b',
    title: 'Qwen3 8B + Qwen3 0.6B draft',
    note: 'attention-only target with the 0.6B model of the same family and vocabulary as the draft',
    strategy: 'draft-model',
    target: {
      fileName: 'Qwen3-8B-Q4_K_M.gguf',
      url: 'https://huggingface.co/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf',
      approxBytes: 5.03 * GB,
      sha256: null,
    },
    draft: {
      fileName: 'Qwen3-0.6B-Q8_0.gguf',
      url: 'https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf',
      approxBytes: 0.64 * GB,
      sha256: null,
    },
    k: 5,
    s: null,
    source: 'https://huggingface.co/Qwen/Qwen3-8B-GGUF',
  },
];
