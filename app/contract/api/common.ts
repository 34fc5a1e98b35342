// Small schemas several concerns share.
import { z } from 'zod';

import { STRATEGIES, strategyListProblem } from '../strategies.js';

export const Id = z.string().min(1).max(200);
/** ISO 8601 time */
export const Time = z.string();
export const None = z.object({}).strict();
export const Ok = z.object({ ok: z.literal(true) });

export const StrategyName = z.enum(STRATEGIES);

/** a chain's members after its first strategy, asked in order when those before draft nothing (llama.cpp's --spec-type a,b) */
export const Fallbacks = z.array(StrategyName).max(STRATEGIES.length - 1);

/** Why a strategy with these fallbacks is no chain (a null strategy: the loaded one, which a chain cannot extend). */
export function chainProblem(strategy: string | null, fallbacks: readonly string[]): string | null {
  if (fallbacks.length === 0) return null;
  if (strategy === null) return 'a strategy list names its first strategy: give a strategy as well as the ones after it';
  return strategyListProblem([strategy, ...fallbacks].join(','));
}

/** The zod check of an object holding a strategy and its fallbacks (chainProblem). */
export function checkChain(value: { strategy: string | null; fallbacks?: readonly string[] | undefined }, ctx: z.RefinementCtx): void {
  const problem = chainProblem(value.strategy, value.fallbacks ?? []);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['fallbacks'] });
}

/** How a speculative reply drafts beyond K and S (spec_p_min, spec_adaptive_k): absent is off. */
export const DraftingPolicy = {
  /** a draft stops where the draft's top-1 probability falls under this (0: off) */
  pMin: z.number().min(0).max(1).optional(),
  /** shorter drafts after rejections */
  adaptiveK: z.boolean().optional(),
};

export const StrategyAvailability = z.object({ available: z.boolean(), reason: z.string().optional() });
export const StrategyTable = z.record(StrategyName, StrategyAvailability);

export const DeviceRequest = z.enum(['auto', 'cuda', 'vulkan', 'cpu']);
