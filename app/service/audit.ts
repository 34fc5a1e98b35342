// The audit behind `power audit`: runs the autoregressive control and the speculative run on
// the same prompt and sampling, and at the first position where they differ, compares the row
// the speculative run sampled (a verify row) with the control's row for that position (a
// one-row decode of the same prefix). Each run gets fresh sessions, so both prefill the prompt
// in the same batches and only the verify passes differ.
import type { SamplingOptions } from '../contract/engine-types.js';
import type { Tokens } from '../engine/protocol.js';
import type { Strategy } from '../contract/strategies.js';
import type { EngineClient } from '../engine/client.js';
import { runRequest, type GenerationOutcome } from './request.js';
import { uniformDraw } from './sampling-draw.js';

export interface AuditRequest {
  modelId: string;
  draftModelId?: string;
  strategy: Strategy;
  /** a chain's members after `strategy` (absent or []: one strategy) */
  fallbacks?: readonly Strategy[];
  /** p-min (0..1; absent or 0: off) */
  pMin?: number;
  adaptiveK?: boolean;
  k: number;
  s: number;
  /** FR (strategy mtp): the head drafts among the first frVocab tokens */
  frVocab?: number;
  contextSize: number;
  threads: number;
  flashAttn?: 'on' | 'off' | 'auto';
  prompt: Tokens;
  maxTokens: number;
  sampling: SamplingOptions;
  /** test hook: called with every speculative session before it generates */
  onSpeculativeSession?: (sessionId: string) => Promise<void>;
}

export interface Divergence {
  /** index of the first differing emitted token */
  index: number;
  /** the end-of-generation token when that run stopped there; null when it stopped otherwise */
  controlToken: number | null;
  specToken: number | null;
  /** the control row's top-1 minus top-2 logit */
  controlMargin: number;
  /** max |verify row − one-row decode row| over the vocabulary */
  rowMaxAbsDiff: number;
  /**
   * the two rows account for the two choices: the sampler, in the state it had before this
   * token (same RNG, same penalty history in both runs), draws specToken from the verify row and
   * controlToken from the one-row decode. Greedy: the difference overcomes the margin. Whether
   * that is an acceptable explanation depends on the engine (auditVerdict).
   */
  rowsAccount: boolean;
}

export interface AuditOutcome {
  identical: boolean;
  /** the Flash Attention setting llama.cpp settled on for the sessions (the same for both runs) */
  flashAttn: 'on' | 'off' | 'unknown';
  control: GenerationOutcome;
  spec: GenerationOutcome;
  firstDivergence: Divergence | null;
}

/** top-1 minus top-2 of a logits row */
export function topMargin(row: Float32Array): number {
  let first = -Infinity;
  let second = -Infinity;
  for (const v of row) {
    if (v > first) {
      second = first;
      first = v;
    } else if (v > second) {
      second = v;
    }
  }
  return first - second;
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`rows of different lengths (${a.length}, ${b.length})`);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return max;
}

/** index of the first difference; the shorter length when one is a prefix of the other; -1 when equal */
export function firstDifference(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

type Row = Float32Array<ArrayBuffer>;
type RunOptions = { speculative: boolean; capture?: { position: number; otherRow?: Row } };

async function run(engine: EngineClient, req: AuditRequest, opts: RunOptions) {
  const session = await engine.call('createSession', {
    modelId: req.modelId,
    contextSize: req.contextSize,
    threads: req.threads,
    ...(req.flashAttn ? { flashAttn: req.flashAttn } : {}),
    strategy: opts.speculative ? req.strategy : 'none',
    k: opts.speculative ? req.k : 0,
    s: opts.speculative ? req.s : 0,
    ...(opts.speculative && req.frVocab !== undefined ? { frVocab: req.frVocab } : {}),
    ...(opts.speculative && req.fallbacks?.length ? { fallbacks: [...req.fallbacks] } : {}),
    ...(opts.speculative && req.pMin ? { pMin: req.pMin } : {}),
    ...(opts.speculative && req.adaptiveK ? { adaptiveK: true } : {}),
    ...(opts.speculative && req.draftModelId ? { draftModelId: req.draftModelId } : {}),
  });
  const { sessionId } = session;
  try {
    if (opts.speculative) await req.onSpeculativeSession?.(sessionId);
    if (opts.capture) {
      await engine.call('captureRow', {
        sessionId,
        position: opts.capture.position,
        ...(opts.capture.otherRow ? { otherRow: opts.capture.otherRow } : {}),
      });
    }
    const outcome = await runRequest(engine, { sessionId, prompt: req.prompt, maxTokens: req.maxTokens, sampling: req.sampling });
    const captured = opts.capture ? await engine.call('capturedRow', { sessionId }) : null;
    return { outcome, captured, flashAttn: session.flashAttn };
  } finally {
    await engine.call('disposeSession', { sessionId });
  }
}

export async function runAudit(engine: EngineClient, req: AuditRequest): Promise<AuditOutcome> {
  const control = (await run(engine, req, { speculative: false })).outcome;
  const specRun = await run(engine, req, { speculative: true });
  const { outcome: spec, flashAttn } = specRun;
  const index = firstDifference(control.tokens, spec.tokens);
  if (index < 0) return { identical: true, flashAttn, control, spec, firstDivergence: null };

  // Both runs again, the same way (the same max tokens, so every verify batch has its shape),
  // keeping the row each sampled the token at that position from. The speculative run's sampler
  // also draws from the control's row in the state it had right then.
  const position = req.prompt.length + index;
  const controlAgain = await run(engine, req, { speculative: false, capture: { position } });
  const controlRow = controlAgain.captured?.row;
  if (!controlRow) throw new Error(`the control did not sample position ${position} again`);
  const specAgain = await run(engine, req, { speculative: true, capture: { position, otherRow: controlRow } });
  const specCapture = specAgain.captured;
  if (!specCapture) throw new Error(`the speculative run did not sample position ${position} again`);

  // a run that ended there sampled an end-of-generation token at that position (not emitted)
  const controlToken = control.tokens[index] ?? (control.stopReason === 'eos' ? specCapture.otherToken : null);
  const specToken = spec.tokens[index] ?? (spec.stopReason === 'eos' ? specCapture.rowToken : null);
  // the reruns reproduce their runs (else nothing here can explain the first ones)
  const reproduced =
    firstDifference(controlAgain.outcome.tokens, control.tokens) < 0 && firstDifference(specAgain.outcome.tokens, spec.tokens) < 0;
  const rowMaxAbsDiff = maxAbsDiff(specCapture.row, controlRow);
  const rowsAccount =
    reproduced &&
    rowMaxAbsDiff > 0 &&
    controlToken !== null &&
    specToken !== null &&
    specCapture.rowToken === specToken &&
    specCapture.otherToken === controlToken;
  return {
    identical: false,
    flashAttn,
    control,
    spec,
    firstDivergence: { index, controlToken, specToken, controlMargin: topMargin(controlRow), rowMaxAbsDiff, rowsAccount },
  };
}

export type AuditVerdict = 'identical' | 'explained' | 'not-invariant' | 'unexplained';

/**
 * What a divergence means. On an engine that claims batch invariance every verify row equals the
 * one-row decode, so any difference is a failure, however well the rows account for it
 * ('not-invariant': the claim is wrong). Elsewhere rounding is expected, and a divergence is
 * explained when the rows account for it.
 */
export function auditVerdict(outcome: Pick<AuditOutcome, 'identical' | 'firstDivergence'>, batchInvariant: boolean): AuditVerdict {
  if (outcome.identical || !outcome.firstDivergence) return 'identical';
  if (batchInvariant) return 'not-invariant';
  return outcome.firstDivergence.rowsAccount ? 'explained' : 'unexplained';
}

/** Where the two sampling paths first chose differently, and whether the row accounts for it. */
export interface PathDivergence {
  index: number;
  cpuToken: number | null;
  backendToken: number | null;
  /** the uniform number the draw used (seeded; null when greedy) */
  draw: number | null;
  /** the CPU's cumulative probability up to (not including) each token, in the order it summed */
  cpuCumulative: { before: number; after: number } | null;
  backendCumulative: { before: number; after: number } | null;
  /** the logits of the two tokens in the row (greedy: a tie shows as equal values) */
  cpuLogit: number | null;
  backendLogit: number | null;
  /** greedy-tie | draw-at-boundary | unexplained */
  cause: 'greedy-tie' | 'draw-at-boundary' | 'unexplained';
}

export interface PathComparison {
  identical: boolean;
  cpu: GenerationOutcome;
  backend: GenerationOutcome;
  firstDivergence: PathDivergence | null;
}

/**
 * How far apart f32 and double sums of the same probabilities can fall: the backend's sums run
 * over up to the whole vocabulary in f32 (about 2^-24 relative per addition).
 */
const BOUNDARY_TOLERANCE = 1e-4;

/** What the CPU's rerun kept of the first position where the two paths differ. */
export interface DivergenceEvidence {
  cpuToken: number | null;
  backendToken: number | null;
  /** the target's row of logits at that position (the CPU path's) */
  row: Float32Array;
  /** the candidates the CPU's draw summed over, in its order, with their probabilities */
  drawnFromIds: Int32Array;
  drawnFromP: Float64Array;
  /** the draw's uniform number (null: greedy, or a speculative run, whose draws are not counted) */
  draw: number | null;
  seeded: boolean;
}

/**
 * Why the paths chose differently, from the CPU's row: a greedy tie (equal top logits: the CPU
 * takes the lowest id, a GPU's argmax need not), or a seeded draw within rounding of the boundary
 * between the two tokens, adjacent in the CPU's summing order (the CPU sums probabilities in
 * double, the backend in f32); anything else is unexplained.
 */
export function explainDivergence(e: DivergenceEvidence): Omit<PathDivergence, 'index'> {
  const { cpuToken, backendToken } = e;
  const logit = (t: number | null) => (t === null ? null : (e.row[t] ?? null));
  const ids = Array.from(e.drawnFromIds);
  const cumulative = (t: number | null) => {
    const at = t === null ? -1 : ids.indexOf(t);
    if (at < 0) return null;
    let before = 0;
    for (let i = 0; i < at; i++) before += e.drawnFromP[i] ?? 0;
    return { before, after: before + (e.drawnFromP[at] ?? 0) };
  };
  const cpuCumulative = e.seeded ? cumulative(cpuToken) : null;
  const backendCumulative = e.seeded ? cumulative(backendToken) : null;
  let cause: PathDivergence['cause'] = 'unexplained';
  if (!e.seeded && cpuToken !== null && backendToken !== null && logit(cpuToken) === logit(backendToken)) cause = 'greedy-tie';
  if (e.draw !== null && cpuCumulative && backendCumulative) {
    // adjacent in the summing order, and the draw within rounding of the edge between them
    const edge =
      cpuCumulative.after === backendCumulative.before
        ? cpuCumulative.after
        : backendCumulative.after === cpuCumulative.before
          ? cpuCumulative.before
          : null;
    if (edge !== null && Math.abs(edge - e.draw) < BOUNDARY_TOLERANCE) cause = 'draw-at-boundary';
  }
  return {
    cpuToken,
    backendToken,
    draw: e.draw,
    cpuCumulative,
    backendCumulative,
    cpuLogit: logit(cpuToken),
    backendLogit: logit(backendToken),
    cause,
  };
}

/**
 * The same request on both sampling paths (autoregressive, or speculative when `speculative`):
 * where the tokens first differ, the CPU run is repeated with the row of that position kept, and
 * the difference explained from it: a greedy tie (equal top logits: the CPU takes the lowest id,
 * a GPU's argmax need not), or a seeded draw that falls within rounding of the boundary between
 * the two tokens (the CPU sums probabilities in double, the backend in f32).
 */
export async function compareSamplingPaths(engine: EngineClient, req: AuditRequest, speculative = false): Promise<PathComparison> {
  const on = (path: 'cpu' | 'backend'): AuditRequest => ({ ...req, sampling: { ...req.sampling, path } });
  const cpu = (await run(engine, on('cpu'), { speculative })).outcome;
  const backend = (await run(engine, on('backend'), { speculative })).outcome;
  const index = firstDifference(cpu.tokens, backend.tokens);
  if (index < 0) return { identical: true, cpu, backend, firstDivergence: null };

  const position = req.prompt.length + index;
  const again = await run(engine, on('cpu'), { speculative, capture: { position } });
  const captured = again.captured;
  if (!captured) throw new Error(`the CPU run did not sample position ${position} again`);
  const explained = explainDivergence({
    cpuToken: cpu.tokens[index] ?? null,
    backendToken: backend.tokens[index] ?? null,
    row: captured.row,
    drawnFromIds: captured.drawnFromIds,
    drawnFromP: captured.drawnFromP,
    // the autoregressive run draws once per emitted token before this one
    draw: req.sampling.temperature > 0 && !speculative ? uniformDraw(req.sampling.seed, index) : null,
    seeded: req.sampling.temperature > 0,
  });
  return {
    identical: false,
    cpu,
    backend,
    firstDivergence: { index, ...explained },
  };
}
