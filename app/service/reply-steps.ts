// The steps a chat reply (chat-replies.ts) and a /v1 completion (completions.ts) take alike, and
// the seed draw the CLI shares: resolve the profile and get its session, check that the prompt
// fits, draw the seed, build the engine's sampling, mark the engine busy, and turn an engine
// crash into the error the caller reports.
import { randomInt } from 'node:crypto';

import { PowerError } from '../contract/api/errors.js';
import type { ProfileEntry } from '../contract/api/profiles.js';
import { SAMPLING_DEFAULTS, type SamplingOptions } from '../contract/engine-types.js';
import { EngineCrashedError } from '../engine/client.js';
import type { ActiveSession, EngineSupervisor } from './engine-supervisor.js';
import { resolveProfile, type Chain, type ProfileRequest, type ResolvedProfile } from './profiles.js';

type Supervisor = Pick<EngineSupervisor, 'sessionFor' | 'setStatus' | 'loaded' | 'crashed'>;

/**
 * The seed a request runs with: the one asked for, else a fresh draw for a sampled request (the
 * reply reports it, so the run can be repeated); greedy needs none (null).
 */
/** what "JSON" asks for without a schema: any object (OpenAI's json_object; llama-server would take any JSON value) */
export const JSON_OBJECT_SCHEMA = { type: 'object' };

/** The engine's constraint for a reply format: a JSON reply follows its schema, or any object. */
export function formatConstraint(format: 'text' | 'json', jsonSchema: string | undefined): { jsonSchema?: string } {
  return format === 'json' ? { jsonSchema: jsonSchema ?? JSON.stringify(JSON_OBJECT_SCHEMA) } : {};
}

export function drawSeed(seed: number | null | undefined, temperature: number): number | null {
  return seed ?? (temperature > 0 ? randomInt(0, 0xffffffff) : null);
}

/** The profile resolved against the loaded strategy (K and S of the request over the profile's), and the session that runs it. */
export async function sessionForProfile(
  supervisor: Supervisor,
  profile: ProfileEntry,
  loaded: Chain,
  request: ProfileRequest = {},
  /** the model's projector, for a prompt with images */
  projector?: string,
): Promise<{ resolved: ResolvedProfile; target: Awaited<ReturnType<EngineSupervisor['sessionFor']>>['target']; session: ActiveSession }> {
  const resolved = resolveProfile(profile, loaded, request);
  const { entry: _entry, ...spec } = resolved;
  const { target, session } = await supervisor.sessionFor({ ...spec, ...(projector ? { projector } : {}) });
  return { resolved, target, session };
}

/** Refuses a prompt that leaves no room for one generated token; `what` names it, `advice` says what to do. */
export function checkPromptFits(tokens: number, contextSize: number, what: 'prompt' | 'conversation', advice = ''): void {
  if (tokens + 1 > contextSize) {
    throw new PowerError('bad-input', `the ${what} is ${tokens} tokens but the context holds ${contextSize}${advice ? `: ${advice}` : ''}`);
  }
}

/** The engine's sampling for a request: its settings over the engine's defaults, with the drawn seed (0 where greedy needs none). */
export function engineSampling(settings: Partial<Omit<SamplingOptions, 'seed'>>, seed: number | null): SamplingOptions {
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
  return { ...SAMPLING_DEFAULTS, ...given, seed: seed ?? 0 };
}

/**
 * Runs a generation with the engine's status 'generating', and 'ready' again after it while a
 * model is loaded; an engine that died meanwhile is marked crashed first (no 'ready' then).
 */
export async function whileGenerating<T>(supervisor: Supervisor, run: () => Promise<T>): Promise<T> {
  supervisor.setStatus('generating');
  try {
    return await run();
  } catch (error) {
    if (error instanceof EngineCrashedError) supervisor.crashed(error.message);
    throw error;
  } finally {
    if (supervisor.loaded()) supervisor.setStatus('ready');
  }
}

/**
 * An engine that died during a reply: the supervisor marks it crashed (the model reloads on the
 * next request) and the error says how far the reply got and whether those tokens are kept.
 */
export function crashDuringReply(supervisor: Supervisor, error: EngineCrashedError, tokens: number, kept: boolean): PowerError {
  supervisor.crashed(error.message);
  const got = kept ? `the ${tokens} tokens before it are kept` : `after ${tokens} tokens`;
  return new PowerError(
    'engine-crashed',
    `the engine stopped during this reply; ${got}, and the model reloads on the next request (${error.message})`,
  );
}
