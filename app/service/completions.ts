// Stateless completions for the OpenAI-compatible API of `power serve`: a list of chat messages
// (rendered with the model's chat template) or a raw prompt, answered by the one supervised
// engine. A request names a library model: when another model set is loaded it is loaded in its
// place (one model set at a time); while a chat reply or another completion runs, it waits its
// turn. Strategy, K and S come from the request, else from the profile (the request's or the
// active one), with the same refusals as every other front door. A chat on a model's own template
// is prompted by llama.cpp's application of it, as llama-server's is; a thinking template's reply
// is read by its parser, the reasoning apart from the answer (unless the request's
// reasoning_format is 'none'), and a budget ends the thinking with llama.cpp's reasoning budget.
import { LoadOptions } from '../contract/api/engine.js';
import { PowerError } from '../contract/api/errors.js';
import type { ReplyStats } from '../contract/api/generation.js';
import type { SamplingPath, StopReason, TokenLogprobs } from '../contract/engine-types.js';
import { strategyLabel, type Strategy } from '../contract/strategies.js';
import { EngineCrashedError } from '../engine/client.js';
import { Conversation } from './conversation.js';
import type { EngineSupervisor } from './engine-supervisor.js';
import type { ModelLibrary } from './library.js';
import { chainProblem } from '../contract/api/common.js';
import { memberStats, type MemberRound, type MemberStats } from '../contract/report/stats.js';
import { draftingOf, type Chain, type ProfileStore } from './profiles.js';
import { checkPromptFits, crashDuringReply, drawSeed, engineSampling, sessionForProfile, whileGenerating } from './reply-steps.js';
import type { ServiceMetrics } from './metrics.js';
import type { ReplySlot } from './reply-slot.js';
import { runRequest } from './request.js';
import { asPowerError } from '../runtime/target.js';
import { draftKind } from '../models/draft-compat.js';
import type { ChatTemplateResult, MediaPrompt, ReasoningFormat } from '../engine/protocol.js';
import type { PromptMessage } from './conversation.js';
import { reasoningBudget, splitAtTags, thinkingSeqs, thinks } from './thinking.js';
import {
  checkRequired,
  planPrompt,
  planTools,
  replyDelta,
  templatePlan,
  type ReadReply,
  type ToolCallDelta,
  type ToolPlan,
  type ToolUse,
} from './tool-calls.js';

export interface CompletionRequest {
  /** a library entry's name (or id) */
  model: string;
  /** a chat's messages; a chat with tools (given, or calls and results in its conversation); or a raw prompt */
  prompt:
    | { kind: 'chat'; messages: PromptMessage[]; images?: MediaPrompt['images'] }
    | { kind: 'tools'; use: ToolUse }
    | { kind: 'text'; text: string };
  maxTokens: number;
  temperature: number;
  topP: number;
  /** where tokens are sampled (llama-server's backend_sampling: true, false or absent) */
  samplingPath: SamplingPath;
  seed?: number;
  /** the reply ends before the first of these in its text (OpenAI's `stop`) */
  stop?: readonly string[];
  strategy?: Strategy;
  /** with `strategy`: a chain's members after it (llama.cpp's --spec-type a,b) */
  fallbacks?: Strategy[];
  /** a draft's library name (or id) */
  draft?: string;
  k?: number;
  s?: number;
  /** FR: the MTP head drafts among the first N tokens */
  frVocab?: number;
  /** a draft stops under this top-1 probability */
  pMin?: number;
  /** shorter drafts after rejections */
  adaptiveK?: boolean;
  /** a profile id or name */
  profile?: string;
  /** a GBNF grammar the reply follows */
  grammar?: string;
  /** a JSON schema (JSON text) the reply follows */
  jsonSchema?: string;
  /** log-probabilities per token: its own and those of the N most likely tokens */
  logprobs?: number;
  /** a chat on a model's own template: its thinking (llama-server's fields) */
  thinking?: ChatThinking;
}

/** What a chat request asks of a thinking template, as llama-server's fields do. */
export interface ChatThinking {
  /** the template's enable_thinking (absent: true) */
  enableThinking?: boolean;
  /** chat_template_kwargs: more variables for the template */
  chatTemplateKwargs?: Record<string, unknown>;
  /** reasoning_format: 'none' leaves the reasoning in the content (absent: auto) */
  reasoningFormat?: ReasoningFormat;
  /** thinking_budget_tokens: the most tokens the thinking may take (absent: no limit) */
  budget?: number;
  /** thinking_budget_message: written before the end tag the budget forces */
  budgetMessage?: string;
}

export interface CompletionResult {
  model: string;
  promptTokens: number;
  completionTokens: number;
  tokens: number[];
  text: string;
  /** with tools: the reply read as the template's format gives it (its text, its calls) */
  toolReply?: ReadReply & { format: string };
  /** a reply read for its reasoning (a thinking template): the reasoning; `text` is then the answer alone */
  reasoning?: string;
  stopReason: StopReason;
  digest: string;
  stats: ReplyStats;
  strategy: Strategy;
  k: number | null;
  s: number | null;
  seed: number | null;
  /** how it drafted beyond strategy, K and S (a chain's other members and each one's rounds, FR, p-min, adaptive K): only what was set */
  drafting: ReturnType<typeof draftingOf> & { members?: MemberStats[] };
}

export interface CompletionDeps {
  supervisor: EngineSupervisor;
  library: ModelLibrary;
  profiles: ProfileStore;
  /** the reply slot shared with chat replies: a completion waits its turn */
  slot: ReplySlot;
  /** every completion's outcome counts for GET /metrics */
  metrics: ServiceMetrics;
}

/** How far a completion has come when a piece of its text arrives. */
export interface CompletionProgress {
  /** tokens generated so far */
  tokens: number;
  /** rounds of the transaction so far */
  rounds: number;
  /** the log-probabilities of the tokens this piece of text completes, when the request asked for them */
  logprobs?: TokenLogprobs[];
  /** with tools: what is new in the reply's calls (the text is then the reply's content, calls left out) */
  toolCalls?: ToolCallDelta[];
  /** a thinking reply: what is new in its reasoning (the text is then the answer's) */
  reasoning?: string;
}

export interface Completions {
  complete(
    request: CompletionRequest,
    onText: (text: string, progress: CompletionProgress) => void,
    signal: AbortSignal,
  ): Promise<CompletionResult>;
}

export function createCompletions(deps: CompletionDeps): Completions {
  const { supervisor, library, profiles } = deps;

  const entryNamed = (what: string, name: string) => {
    const entries = library.list();
    const entry = entries.find((e) => e.name === name) ?? entries.find((e) => e.id === name);
    if (!entry) {
      const names = entries.map((e) => e.name).join(', ') || 'none';
      throw new PowerError('not-found', `no ${what} '${name}' in the library (models: ${names})`);
    }
    if (entry.problem) throw new PowerError('bad-input', `${entry.name} cannot be used: ${entry.problem}`);
    return entry;
  };

  const profileNamed = (name: string) => {
    const found = profiles.list().profiles.find((p) => p.id === name || p.name === name);
    if (!found)
      throw new PowerError(
        'not-found',
        `no profile '${name}' (profiles: ${profiles
          .list()
          .profiles.map((p) => p.id)
          .join(', ')})`,
      );
    return found;
  };

  /** The chain the request asks for itself: its strategy (and fallbacks), else what a named draft drafts for (draft-model, mtp for an assistant, ...). */
  const chainAsked = async (request: CompletionRequest): Promise<Chain | null> => {
    if (request.fallbacks?.length && request.strategy === undefined) {
      throw new PowerError('bad-input', 'fallbacks extend a strategy: give strategy as well');
    }
    if (request.strategy !== undefined) {
      const fallbacks = request.fallbacks ?? [];
      const problem = chainProblem(request.strategy, fallbacks);
      if (problem) throw new PowerError('bad-input', problem);
      return { strategy: request.strategy, fallbacks };
    }
    if (request.draft === undefined) return null;
    return { strategy: draftKind(await library.gguf(entryNamed('draft', request.draft).id)), fallbacks: [] };
  };

  /** Loads the model set the request needs unless it is the loaded one. */
  async function ensureLoaded(request: CompletionRequest, asked: Chain | null): Promise<{ loaded: Chain; modelName: string }> {
    const model = entryNamed('model', request.model);
    const draft = request.draft !== undefined ? entryNamed('draft', request.draft) : null;
    // what is really loaded (or reloads after a crash); the options of a load that failed do not count
    const loaded = supervisor.loaded() || supervisor.state().reloadPending ? supervisor.loadedOptions() : null;
    const sameModel = loaded?.modelId === model.id;
    // the chain: asked for, else the loaded one (same model), else the profile's, else none
    const profile = request.profile !== undefined ? profileNamed(request.profile) : profiles.active();
    const chain: Chain = asked ??
      (sameModel ? loaded!.draftMethod : null) ??
      (profile.strategy !== null ? { strategy: profile.strategy, fallbacks: profile.fallbacks ?? [] } : null) ?? {
        strategy: 'none',
        fallbacks: [],
      };
    const label = strategyLabel(chain.strategy, chain.fallbacks);
    const loadedLabel = loaded ? strategyLabel(loaded.draftMethod.strategy, loaded.draftMethod.fallbacks) : null;
    const draftId = draft?.id ?? (sameModel && loadedLabel === label ? loaded!.draftMethod.draftId : undefined);
    // the autoregressive control runs on whatever method the model was loaded with
    const wanted = sameModel && (chain.strategy === 'none' || (loadedLabel === label && loaded!.draftMethod.draftId === draftId));
    // (after a crash the same model set reloads in sessionFor)
    if (!wanted) {
      const base = sameModel ? loaded! : LoadOptions.parse({ modelId: model.id });
      await supervisor.load({
        ...base,
        draftMethod: { strategy: chain.strategy, fallbacks: [...chain.fallbacks], ...(draftId ? { draftId } : {}) },
      });
    }
    const now = supervisor.loadedOptions()!.draftMethod;
    return { loaded: { strategy: now.strategy, fallbacks: now.fallbacks }, modelName: model.name };
  }

  async function complete(
    request: CompletionRequest,
    onText: (text: string, progress: CompletionProgress) => void,
    signal: AbortSignal,
  ): Promise<CompletionResult> {
    if (signal.aborted) throw new PowerError('cancelled', 'the request was cancelled');
    const lease = await deps.slot.wait({ kind: 'completion' }, signal);
    const stopOnAbort = (): void => void lease.stop();
    signal.addEventListener('abort', stopOnAbort, { once: true });
    let streamed = 0;
    let rounds = 0;
    try {
      const chain = await chainAsked(request);
      const { loaded, modelName } = await ensureLoaded(request, chain);
      const profile = request.profile !== undefined ? profileNamed(request.profile) : profiles.active();
      // the request's own chain, K, S, FR and drafting policy over the profile's
      const images = request.prompt.kind === 'chat' ? (request.prompt.images ?? []) : [];
      const { resolved, target, session } = await sessionForProfile(
        supervisor,
        profile,
        loaded,
        {
          ...(chain ? { chain } : {}),
          ...(request.k !== undefined ? { k: request.k } : {}),
          ...(request.s !== undefined ? { s: request.s } : {}),
          ...(request.frVocab !== undefined ? { frVocab: request.frVocab } : {}),
          ...(request.pMin !== undefined ? { pMin: request.pMin } : {}),
          ...(request.adaptiveK !== undefined ? { adaptiveK: request.adaptiveK } : {}),
        },
        images.length > 0 ? library.projectorPath(entryNamed('model', request.model).id) : undefined,
      );
      const speculative = resolved.strategy !== 'none';
      if (request.s !== undefined && speculative && !target.info.recurrent) {
        throw new PowerError('bad-input', 's (recurrent rollback snapshots) does not apply to this attention-only model: leave it out');
      }

      const conv = new Conversation(target.engine, target.modelId, target.info);
      let prompt: number[];
      // a prompt with images is tokenized in the engine, with the images, through the projector
      let media: MediaPrompt | undefined;
      // the request's stop sequences, and for a chat the template's end of turn where the model has no token for it
      const stops = [...(request.stop ?? [])];
      let plan: ToolPlan | null = null;
      // how the reply is read: with tools, its calls; on a thinking template, its reasoning apart
      let readPlan: ToolPlan | null = null;
      // what llama.cpp's application of the model's template says the reply needs (null: none, or ChatML here)
      let template: ChatTemplateResult | null = null;
      const thinking = request.thinking ?? {};
      const templateOptions = {
        ...(thinking.enableThinking !== undefined ? { enableThinking: thinking.enableThinking } : {}),
        ...(thinking.chatTemplateKwargs !== undefined ? { chatTemplateKwargs: thinking.chatTemplateKwargs } : {}),
        ...(thinking.reasoningFormat !== undefined ? { reasoningFormat: thinking.reasoningFormat } : {}),
      };
      if (request.prompt.kind === 'tools') {
        const use = request.prompt.use;
        if ((request.grammar !== undefined || request.jsonSchema !== undefined) && use.tools.length > 0 && use.toolChoice !== 'none') {
          throw new PowerError('bad-input', 'a grammar or a JSON schema cannot go with tools (the tools bring their own grammar)');
        }
        plan = await planTools(conv, use, stops, templateOptions);
        readPlan = plan;
        template = plan.template ?? null;
        const planned = await planPrompt(target.engine, target.modelId, conv, plan);
        prompt = planned.tokens;
        stops.push(...planned.stops);
      } else if (request.prompt.kind === 'chat') {
        if (images.length > 0) {
          ({ media, template } = await conv.mediaPrompt(request.prompt.messages, images, templateOptions));
          prompt = [];
        } else {
          const asked = await conv.prompt(request.prompt.messages, templateOptions);
          prompt = asked.tokens;
          template = asked.template;
        }
        stops.push(...(await conv.stops()), ...(template?.additionalStops ?? []));
        if (thinks(template) && thinking.reasoningFormat !== 'none') {
          readPlan = lenient(templatePlan(target.engine, target.modelId, template, [...stops], thinking.reasoningFormat), template);
        }
      } else {
        if (request.prompt.text === '') throw new PowerError('bad-input', 'the prompt is empty');
        prompt = Array.from(
          await target.engine.call('tokenize', {
            modelId: target.modelId,
            text: request.prompt.text,
            addSpecial: target.info.addBos,
            parseSpecial: false,
          }),
        );
      }
      // (the engine checks a prompt with images, whose length only it knows)
      if (!media) checkPromptFits(prompt.length, target.contextSize, 'prompt');

      const seed = drawSeed(request.seed, request.temperature);
      // a chain's rounds by the member that drafted them (the answer's power.members)
      const chained = speculative && resolved.fallbacks.length > 0;
      const drafted: MemberRound[] = [];
      // llama.cpp's reasoning budget, where the template has thinking tags and the reply thinks
      const budget =
        thinking.budget !== undefined && thinks(template) && thinking.enableThinking !== false
          ? reasoningBudget(template, await thinkingSeqs(target.engine, target.modelId, template), thinking.budget, thinking.budgetMessage)
          : undefined;
      // with tools or a thinking template: the reply is read again after each batch and only what changed is handed on
      const reading = readPlan ? streamedToolReply(readPlan, onText) : null;
      const outcome = await whileGenerating(supervisor, () =>
        runRequest(
          target.engine,
          {
            sessionId: session.sessionId,
            prompt,
            ...(media ? { media } : {}),
            maxTokens: request.maxTokens,
            // OpenAI's temperature and top_p and the output's constraint, every other setting at its default
            sampling: engineSampling(
              {
                temperature: request.temperature,
                topP: request.topP,
                path: request.samplingPath,
                grammar: request.grammar,
                jsonSchema: request.jsonSchema,
                logprobs: request.logprobs,
                ...plan?.sampling,
                ...(budget ? { reasoningBudget: budget } : {}),
              },
              seed,
            ),
            stops,
          },
          {
            lease,
            keepRounds: false,
            sink: (batch) => {
              for (const round of batch.rounds) {
                streamed += round.tokenIds.length;
                if (chained) drafted.push({ member: round.member, proposed: round.proposed, accepted: round.accepted });
              }
              rounds += batch.rounds.length;
              if (reading) {
                // the parsed reply's text comes after its reads; the tokens' log-probabilities at once
                if (batch.logprobs) onText('', { tokens: streamed, rounds, logprobs: batch.logprobs });
                reading.add(batch, { tokens: streamed, rounds });
              } else if (batch.text || batch.logprobs)
                onText(batch.text, { tokens: streamed, rounds, ...(batch.logprobs ? { logprobs: batch.logprobs } : {}) });
            },
          },
        ),
      );
      deps.metrics.record(outcome);
      const read = reading ? await reading.finish(outcome.tokens, outcome.text, { tokens: streamed, rounds }) : undefined;
      const toolReply = plan ? read : undefined;
      if (toolReply && request.prompt.kind === 'tools') checkRequired(request.prompt.use, toolReply, outcome.text, outcome.stopReason);
      return {
        model: modelName,
        // (with images, the positions the engine evaluated them into)
        promptTokens: media ? outcome.replyStats.promptTokens : prompt.length,
        completionTokens: outcome.tokens.length,
        tokens: outcome.tokens,
        // a thinking reply read apart: the answer alone
        text: read && !plan ? read.content : outcome.text,
        ...(toolReply ? { toolReply: { ...toolReply, format: plan!.format } } : {}),
        ...(read && readPlan?.template && thinks(readPlan.template) ? { reasoning: read.reasoning ?? '' } : {}),
        stopReason: outcome.stopReason,
        digest: outcome.digest,
        stats: outcome.replyStats,
        strategy: resolved.strategy,
        drafting: {
          ...draftingOf(resolved),
          ...(chained ? { members: memberStats([resolved.strategy, ...resolved.fallbacks], drafted) } : {}),
        },
        k: speculative ? session.k : null,
        s: speculative ? session.s : null,
        seed,
      };
    } catch (error) {
      if (error instanceof EngineCrashedError) throw crashDuringReply(supervisor, error, streamed, false);
      // a close() of the service while the request was being set up or ran
      if (lease.stopRequested && !signal.aborted && !(error instanceof PowerError)) throw new PowerError('cancelled', 'Power is stopping');
      throw asPowerError(error);
    } finally {
      signal.removeEventListener('abort', stopOnAbort);
      lease.release();
    }
  }

  return { complete };
}

/**
 * A chat reply read for its reasoning is a reply whatever the parser makes of it: one it cannot
 * read whole (cut by max_tokens inside the thinking) is read as far as it goes, and one whose
 * text it cannot read (a byte that ends no character stops its grammar) is split at the
 * thinking's tags.
 */
function lenient(plan: ToolPlan, template: ChatTemplateResult): ToolPlan {
  const byTags = (text: string): ReadReply => {
    const split = splitAtTags(template, text);
    return { content: split.content, toolCalls: [], ...(split.reasoningContent !== '' ? { reasoning: split.reasoningContent } : {}) };
  };
  const read = async (tokens: readonly number[], text: string, partial: boolean): Promise<ReadReply> => {
    try {
      const reply = await plan.read(tokens, text, partial);
      const empty = reply.content === '' && !reply.reasoning && reply.toolCalls.length === 0;
      return empty && text.trim() !== '' ? byTags(text) : reply;
    } catch {
      if (partial) return byTags(text);
      return read(tokens, text, true);
    }
  };
  return { ...plan, read };
}

/**
 * A reply with tools as it streams: after each batch the reply so far is read with the plan's
 * parser (reads one at a time, in order) and only the new text and the new parts of calls go to
 * `onText`; `finish` reads the whole reply and hands on what the last partial read had not.
 */
function streamedToolReply(plan: ToolPlan, onText: (text: string, progress: CompletionProgress) => void) {
  const tokens: number[] = [];
  let text = '';
  let shown: ReadReply = { content: '', toolCalls: [] };
  let reads: Promise<void> = Promise.resolve();
  const show = (now: ReadReply, progress: CompletionProgress): void => {
    const delta = replyDelta(shown, now);
    shown = now;
    if (delta.content !== '' || delta.toolCalls.length > 0 || delta.reasoning !== undefined)
      onText(delta.content, {
        ...progress,
        ...(delta.toolCalls.length > 0 ? { toolCalls: delta.toolCalls } : {}),
        ...(delta.reasoning !== undefined ? { reasoning: delta.reasoning } : {}),
      });
  };
  return {
    add(batch: { rounds: readonly { tokenIds: readonly number[] }[]; text: string }, progress: CompletionProgress): void {
      for (const round of batch.rounds) tokens.push(...round.tokenIds);
      text += batch.text;
      const snapshot = { tokens: [...tokens], text };
      // a reply cut mid-token may not parse yet: the next batch's read, or the whole one, will
      reads = reads.then(async () => show(await plan.read(snapshot.tokens, snapshot.text, true), progress)).catch(() => undefined);
    },
    async finish(all: readonly number[], whole: string, progress: CompletionProgress): Promise<ReadReply> {
      await reads;
      const reply = await plan.read(all, whole, false);
      show(reply, progress);
      return reply;
    },
  };
}
