// K/S profiles (docs/speculative-decoding.md "Profiles"): plain data, e.g. a TOML file
//   spec_mode = "mtp"                (or a list, "ngram,mtp": the first that drafts wins each round)
//   spec_draft_max = 7
//   spec_mtp_recurrent_snapshots = 7
//   spec_p_min = 0.75                (greedy drafters stop under this top-1 probability)
//   spec_adaptive_k = true           (shorter drafts after rejections)
//   spec_mtp_fr_vocab_size = 8192    (FR: the MTP head drafts among the first N tokens)
//   thinking = false                 (a thinking model's chat replies do not think; default true)
//   thinking_budget = 1024           (the thinking's token budget in the app's chat; default none)
// Unknown keys and out-of-range values are errors.
import { z } from 'zod';

import { PowerError } from './api/errors.js';
import { strategyListProblem } from './strategies.js';

// llama.cpp's own n-gram drafting goes this far (ngram-mod drafts 48-64 tokens a round as
// llama-server runs it), so a profile copied from llama-server is accepted as it is; the GPU
// flavours vouch for verify passes up to their patches' row limit only (BuildInfo.invariantVerifyRows)
export const K_MAX = 64;

export const Profile = z
  .object({
    spec_mode: z.string().superRefine((text, ctx) => {
      const problem = strategyListProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    spec_draft_max: z.number().int().min(1).max(K_MAX).optional(),
    spec_mtp_recurrent_snapshots: z.number().int().min(0).max(K_MAX).optional(),
    spec_mtp_fr_vocab_size: z.number().int().positive().optional(),
    spec_p_min: z.number().min(0).max(1).optional(),
    spec_adaptive_k: z.boolean().optional(),
    /** the app's chat: a thinking model's replies think (power generate does not read it) */
    thinking: z.boolean().optional(),
    /** the app's chat: the thinking's token budget, ended by llama.cpp's reasoning budget */
    thinking_budget: z.number().int().min(0).max(1_000_000).optional(),
  })
  .strict()
  .refine(
    (p) =>
      p.spec_mtp_recurrent_snapshots === undefined || p.spec_draft_max === undefined || p.spec_mtp_recurrent_snapshots <= p.spec_draft_max,
    {
      message: 'spec_mtp_recurrent_snapshots must not exceed spec_draft_max',
    },
  );
export type Profile = z.infer<typeof Profile>;

/** The balanced default: a rollback point for every proposal. */
export const DEFAULT_K = 7;

/**
 * FR, the compact draft projection (spec_mtp_fr_vocab_size, --fr-vocab): the MTP head projects
 * onto its first N rows only. Why these strategies (one, or a chain's members) cannot take it,
 * null when one of them is mtp: every other proposer drafts otherwise.
 */
export function frProblem(members: readonly string[]): string | null {
  if (members.includes('mtp')) return null;
  return `the compact draft projection (spec_mtp_fr_vocab_size / --fr-vocab) narrows the MTP head: it applies to strategy 'mtp' only, not '${members.join(',')}'`;
}

/** One source of K and S for a request, with the names its values go by in an error. */
export interface KSLayer {
  k?: number | null | undefined;
  s?: number | null | undefined;
  kName: string;
  sName: string;
}

/**
 * K and S of a request, the one resolver of every front door: each from the first layer that
 * sets it (the request's own values, then a profile's), K else DEFAULT_K, S else K. An S above
 * K is refused naming where each came from.
 */
export function resolveKS(layers: readonly KSLayer[], defaultK = DEFAULT_K): { k: number; s: number } {
  const kLayer = layers.find((l) => l.k != null);
  const sLayer = layers.find((l) => l.s != null);
  const k = kLayer?.k ?? defaultK;
  const s = sLayer?.s ?? k;
  if (s > k) {
    const kFrom = kLayer ? kLayer.kName : 'the default K';
    throw new PowerError(
      'bad-input',
      `${sLayer!.sName} must be from 0 to K (${k}) (got ${s})${kLayer === layers[0] ? '' : `; K is from ${kFrom}`}`,
    );
  }
  return { k, s };
}
