// The life of a chat reply: it takes the reply slot, checks everything that can refuse on a
// copy of the chat, creates the assistant message, runs the request (app/service/request.ts)
// with a sink that fills the message and streams its rounds, and saves how it ended. A reply
// that fails keeps every token committed before the failure. A thinking model's reply (a
// template with thinking tags) is read with llama.cpp's parser as it streams: the message's
// content is the answer alone, its thinking apart (app/service/thinking.ts), and each batch of
// rounds goes out with the thinking after it.
import { randomUUID } from 'node:crypto';

import type { z } from 'zod';

import { ChatSampling, type AssistantMessage, type Chat, type ReplyEnvironment } from '../contract/api/chats.js';
import { PowerError, toApiError } from '../contract/api/errors.js';
import type { ProfileEntry } from '../contract/api/profiles.js';
import { tokenDigest } from '../contract/generation-result.js';
import { EngineCrashedError } from '../engine/client.js';
import type { ChatTemplateResult, MediaPrompt } from '../engine/protocol.js';
import { asPowerError, invarianceEvidence, type OpenedTarget } from '../runtime/target.js';
import type { ChatStore } from './chat-store.js';
import type { ChatToolPlan, ChatTools } from './chat-tools.js';
import { Conversation, promptImages, promptMessages } from './conversation.js';
import type { EngineSupervisor, ActiveSession } from './engine-supervisor.js';
import type { ServiceEvents } from './events.js';
import type { ModelLibrary } from './library.js';
import { draftingOf, type ProfileStore } from './profiles.js';
import {
  checkPromptFits,
  crashDuringReply,
  drawSeed,
  formatConstraint,
  engineSampling,
  sessionForProfile,
  whileGenerating,
} from './reply-steps.js';
import type { ServiceMetrics } from './metrics.js';
import type { ReplySlot, SlotLease } from './reply-slot.js';
import { runRequest, type RoundsBatch } from './request.js';
import { reasoningBudget, replyParser, thinkingSeqs, thinks, ThinkingReply, ThinkingTracker, type ThinkingSeqs } from './thinking.js';

export interface ReplyOptions {
  sampling?: Partial<z.input<typeof ChatSampling>>;
  profileId?: string;
}

export interface ChatReplyDeps {
  supervisor: EngineSupervisor;
  library: ModelLibrary;
  profiles: ProfileStore;
  store: ChatStore;
  slot: ReplySlot;
  events: ServiceEvents;
  /** every reply's outcome counts for GET /metrics */
  metrics: ServiceMetrics;
  /** MCP tools in the chat and their calls (absent: no tools) */
  tools?: ChatTools;
}

export const now = (): string => new Date().toISOString();

/** What is about to run a reply (the chat report's environment); undefined when the engine says nothing. */
function replyEnvironment(supervisor: EngineSupervisor, target: OpenedTarget, session: ActiveSession): ReplyEnvironment | undefined {
  const backend = supervisor.state().backend;
  if (!backend) return undefined;
  return {
    backend: {
      ...backend,
      flashAttn: session.flashAttn,
      ...invarianceEvidence(target, session),
    },
    contextSize: target.contextSize,
    threads: session.threads,
    // createSession's default: the service does not change it
    batchSize: 512,
    gpus: target.placement.devices
      .filter((d) => d.backend.toUpperCase() === 'CUDA' || (d.backend === 'Vulkan' && !d.onCpu))
      .map((d) => ({ name: d.name, description: d.description, memoryBytes: d.totalBytes })),
  };
}

/**
 * The thinking switch and budget of a reply: the request's, else the chat's, else the profile's,
 * else on with no budget.
 */
export function thinkingSettings(
  asked: ReplyOptions['sampling'],
  chat: Pick<Chat, 'thinking'>,
  profile: Pick<ProfileEntry, 'thinking' | 'thinkingBudget'>,
): { enabled: boolean; budget: number | null } {
  return {
    enabled: asked?.thinking ?? chat.thinking?.enabled ?? profile.thinking ?? true,
    budget:
      asked?.thinkingBudget !== undefined ? asked.thinkingBudget : chat.thinking ? chat.thinking.budget : (profile.thinkingBudget ?? null),
  };
}

/** Batches of rounds handed on together (a thinking reply's parse took longer than the next batch): one event. */
function mergeBatches(batches: readonly RoundsBatch[]): RoundsBatch {
  if (batches.length === 1) return batches[0]!;
  return { rounds: batches.flatMap((b) => b.rounds), text: batches.map((b) => b.text).join(''), stats: batches.at(-1)!.stats };
}

/** Appends what a batch of rounds adds to the stored message (its content too, unless a thinking reply's parser says what it is). */
function appendRounds(message: AssistantMessage, batch: RoundsBatch, content = true): void {
  for (const { texts, ...round } of batch.rounds) {
    round.tokenIds.forEach((id, i) => message.tokens.push({ id, text: texts[i]!, origin: round.origins[i]!, round: round.index }));
    message.rounds.push(round);
  }
  if (batch.rounds.length === 0 && batch.text) {
    // the tail of a character the reply never finished belongs to its last token
    const last = message.tokens.at(-1);
    if (last) last.text += batch.text;
  }
  if (content) message.content += batch.text;
}

export class ChatReplies {
  private conversation: { target: object; conv: Conversation } | null = null;

  constructor(private readonly deps: ChatReplyDeps) {}

  /** The reply being written, once its message exists. */
  active(): { chatId: string; messageId: string } | null {
    const owner = this.deps.slot.holder()?.owner;
    return owner?.kind === 'reply' && owner.messageId ? { chatId: owner.chatId, messageId: owner.messageId } : null;
  }

  /** The chat whose reply holds the slot (also while it is being set up). */
  streamingChat(): string | null {
    const owner = this.deps.slot.holder()?.owner;
    return owner?.kind === 'reply' ? owner.chatId : null;
  }

  /** Stops the chat's reply if it is the one streaming; resolves when it has ended. */
  async stop(chatId: string): Promise<boolean> {
    const lease = this.deps.slot.holder();
    if (!lease || lease.owner.kind !== 'reply' || lease.owner.chatId !== chatId) return false;
    await lease.stop();
    return true;
  }

  /**
   * Applies `change` (which leaves a user message last) and starts the reply to it; resolves
   * with the assistant message's id once the reply streams. Everything that can refuse (the
   * profile, the session, the template, the prompt's size) is checked on a copy first: a refused
   * reply leaves the chat as it was. Images the loaded model cannot read (it has no projector)
   * are the exception: the turn is applied and its reply ends at once with the reason, so that
   * the message and its images stay for a model that reads them.
   */
  async start(chat: Chat, change: (c: Chat) => void, opts: ReplyOptions): Promise<string> {
    const { supervisor, library, profiles, store, slot, events } = this.deps;
    const owner = { kind: 'reply' as const, chatId: chat.id, messageId: null as string | null };
    const lease = slot.take(owner);
    // what the chat was before this turn: a turn whose first save fails (a full disk) is undone
    const before = structuredClone(chat);
    let applied = false;
    try {
      const loadedOptions = supervisor.loadedOptions();
      if (!loadedOptions) throw new PowerError('bad-input', 'no model is loaded: load one first (engine.load)');
      const profile: ProfileEntry = opts.profileId ? profiles.get(opts.profileId) : profiles.active();
      const staged = structuredClone(chat);
      change(staged);
      const messages = promptMessages(staged, staged.messages.length);
      const thinkingAsked = thinkingSettings(opts.sampling, chat, profile);
      const images = promptImages(staged, staged.messages.length);
      // a conversation with images the loaded model cannot read is answered with the reason, as
      // the reply's error: the user's message and its images stay, for a model that can
      let refusal: unknown = null;
      let projector: string | undefined;
      if (images.length > 0) {
        try {
          projector = library.projectorPath(loadedOptions.modelId);
        } catch (error) {
          refusal = error;
        }
      }
      let opened: Awaited<ReturnType<typeof sessionForProfile>>;
      try {
        opened = await sessionForProfile(supervisor, profile, loadedOptions.draftMethod, {}, projector);
      } catch (error) {
        // a projector the engine refuses (M-RoPE positions, another width): the same reply's
        // error; what has nothing to do with the images refuses the text session as well
        if (!projector || error instanceof EngineCrashedError) throw error;
        refusal = error;
        projector = undefined;
        opened = await sessionForProfile(supervisor, profile, loadedOptions.draftMethod);
      }
      const { resolved, target, session } = opened;
      if (!this.conversation || this.conversation.target !== target) {
        this.conversation = { target, conv: new Conversation(target.engine, target.modelId, target.info) };
      }
      const conv = this.conversation.conv;

      let prompt: { text: string; tokens: number[] } = { text: '', tokens: [] };
      // a prompt with images is tokenized in the engine, which checks that it fits
      let media: MediaPrompt | undefined;
      // what llama.cpp's application of the model's template says the reply needs (null: ChatML here)
      let template: ChatTemplateResult | null = null;
      const templateOptions = { enableThinking: thinkingAsked.enabled };
      // a chat with MCP tools on (or calls in it): the prompt, grammar and reader of app/service/chat-tools.ts
      const tools = refusal || !this.deps.tools ? null : await this.deps.tools.plan(staged, conv, templateOptions);
      if (refusal) {
        // nothing to render
      } else if (images.length > 0) {
        ({ media, template } = await conv.mediaPrompt(
          messages,
          await Promise.all(images.map(async (i) => new Uint8Array(await store.image(i.sha256)))),
          templateOptions,
        ));
      } else {
        ({ template, ...prompt } = tools ? { ...tools.prompt, template: null } : await conv.prompt(messages, templateOptions));
        checkPromptFits(
          prompt.tokens.length,
          target.contextSize,
          'conversation',
          'start a new chat or load the model with a larger context',
        );
      }
      // a model without a chat template: the fallback's end of turn, where the model has no token for it
      const stops = [...(await conv.stops()), ...(template?.additionalStops ?? []), ...(tools?.stops ?? [])];
      // a thinking template: its tags in ids and the generation prompt's tokens (the budget and the tracker read them)
      const seqs = thinks(template) ? await thinkingSeqs(target.engine, target.modelId, template) : null;
      change(chat);
      applied = true;
      // the chat remembers the thinking switch and budget a reply was asked with
      if (opts.sampling?.thinking !== undefined || opts.sampling?.thinkingBudget !== undefined) chat.thinking = thinkingAsked;

      const sampling = ChatSampling.parse({ ...opts.sampling, thinking: thinkingAsked.enabled, thinkingBudget: thinkingAsked.budget });
      const seed = drawSeed(sampling.seed, sampling.temperature);
      const entry = library.get(loadedOptions.modelId);
      const draftEntry = loadedOptions.draftMethod.draftId ? library.get(loadedOptions.draftMethod.draftId) : null;
      const speculative = resolved.strategy !== 'none';
      const environment = replyEnvironment(supervisor, target, session);
      const message: AssistantMessage = {
        id: randomUUID(),
        role: 'assistant',
        content: '',
        createdAt: now(),
        status: 'streaming',
        stopReason: null,
        error: null,
        tokens: [],
        rounds: [],
        stats: null,
        digest: null,
        profile: { id: profile.id, name: profile.name },
        strategy: resolved.strategy,
        ...draftingOf(resolved),
        k: speculative ? session.k : null,
        s: speculative ? session.s : null,
        model: { id: entry.id, name: entry.name, sha256: entry.sha256.state === 'done' ? entry.sha256.hex : null },
        draft: speculative && draftEntry ? { id: draftEntry.id, name: draftEntry.name } : null,
        sampling: { ...sampling, seed },
        ...(environment ? { environment } : {}),
      };
      chat.messages.push(message);
      chat.updatedAt = now();
      owner.messageId = message.id;
      await store.save(chat);
      events.chatChanged.emit({ chatId: chat.id, change: 'updated' });

      const request = {
        sessionId: session.sessionId,
        prompt: prompt.tokens,
        ...(media ? { media } : {}),
        maxTokens: sampling.maxTokens,
        // the chat's settings over the engine's defaults (penalty window, presence, frequency)
        sampling: engineSampling(
          {
            temperature: sampling.temperature,
            topK: sampling.topK,
            topP: sampling.topP,
            minP: sampling.minP,
            repeatPenalty: sampling.repeatPenalty,
            path: sampling.path,
            ...formatConstraint(sampling.format, sampling.jsonSchema),
            ...tools?.sampling,
            // llama.cpp's reasoning budget ends the thinking: only where the template has its tags and the reply thinks
            ...(seqs && sampling.thinking && sampling.thinkingBudget !== null
              ? { reasoningBudget: reasoningBudget(template!, seqs, sampling.thinkingBudget) }
              : {}),
          },
          seed,
        ),
        stops,
      };
      const reading =
        seqs && template
          ? { template, seqs, stops, budget: sampling.thinking && sampling.thinkingBudget !== null ? sampling.thinkingBudget : null }
          : null;
      void this.run(lease, chat, message, conv, media || refusal || tools ? null : prompt, request, target, refusal, reading, tools);
      return message.id;
    } catch (error) {
      if (applied) {
        for (const key of Object.keys(chat)) delete (chat as Record<string, unknown>)[key];
        Object.assign(chat, before);
      }
      lease.release();
      throw asPowerError(error);
    }
  }

  private async run(
    lease: SlotLease,
    chat: Chat,
    message: AssistantMessage,
    conv: Conversation,
    /** the text prompt, whose ids the conversation remembers (null: a prompt with images, or none) */
    prompt: { text: string; tokens: number[] } | null,
    request: Parameters<typeof runRequest>[1],
    target: OpenedTarget,
    /** why the reply cannot be given (it ends with that error at once) */
    refusal: unknown,
    /** a thinking template: how the reply is read (null: its text is the answer) */
    reading: { template: ChatTemplateResult; seqs: ThinkingSeqs; stops: string[]; budget: number | null } | null,
    /** a reply with MCP tools: read at the end for its calls */
    tools: ChatToolPlan | null = null,
  ): Promise<void> {
    const { supervisor, store, events } = this.deps;
    const ids = { chatId: chat.id, messageId: message.id };
    const thinking = reading
      ? new ThinkingReply(
          replyParser(target.engine, target.modelId, reading.template, reading.stops),
          new ThinkingTracker(reading.template, reading.seqs, reading.budget, Date.now()),
          reading.template,
        )
      : null;
    // a thinking reply's batches wait for the parser's read of the reply so far; batches that
    // come meanwhile go out together after the next read
    let waiting: RoundsBatch[] = [];
    let reads: Promise<void> | null = null;
    const readAndEmit = async (): Promise<void> => {
      while (waiting.length > 0) {
        const batch = mergeBatches(waiting);
        waiting = [];
        const read = await thinking!.read(false);
        message.content = read.content;
        if (read.thinking) message.thinking = read.thinking;
        events.rounds.emit({ ...ids, ...batch, ...(read.thinking ? { thinking: read.thinking } : {}) });
      }
      reads = null;
    };
    /** the reply read whole: its answer and thinking as stored */
    const finishReading = async (): Promise<void> => {
      if (!thinking) return;
      await reads;
      const read = await thinking.read(true);
      message.content = read.content;
      if (read.thinking) message.thinking = read.thinking;
    };
    try {
      if (refusal) throw refusal;
      const outcome = await whileGenerating(supervisor, () =>
        runRequest(target.engine, request, {
          lease,
          keepRounds: false,
          sink: (batch) => {
            appendRounds(message, batch, !thinking);
            if (!thinking) {
              events.rounds.emit({ ...ids, ...batch });
              return;
            }
            for (const round of batch.rounds) thinking.push(round.tokenIds, round.texts);
            waiting.push(batch);
            reads ??= readAndEmit();
          },
        }),
      );
      await finishReading();
      // the engine says whether its budget ended the thinking
      if (message.thinking && outcome.native.reasoningForced !== undefined) message.thinking.forced = outcome.native.reasoningForced > 0;
      if (tools) await tools.finish(message, outcome);
      this.deps.metrics.record(outcome);
      message.digest = outcome.digest;
      message.stats = outcome.replyStats;
      message.stopReason = outcome.stopReason;
      message.status = outcome.stopReason === 'cancelled' ? 'stopped' : 'done';
      // the reply's ids with the text they spell (after a stop string: that string too)
      if (prompt) conv.remember(prompt, { text: outcome.tokensText, tokens: outcome.tokens });
      chat.updatedAt = now();
      await store.save(chat);
      events.done.emit({ ...ids, stopReason: outcome.stopReason, digest: outcome.digest, stats: outcome.replyStats });
    } catch (error) {
      // what the reply thought before it failed stays with it
      await finishReading().catch(() => {});
      const apiError = toApiError(
        error instanceof EngineCrashedError ? crashDuringReply(supervisor, error, message.tokens.length, true) : asPowerError(error),
      );
      message.status = 'error';
      message.error = apiError;
      message.digest = await tokenDigest(message.tokens.map((t) => t.id));
      if (prompt) conv.remember(prompt, null);
      chat.updatedAt = now();
      await store.save(chat).catch(() => {});
      events.error.emit({ ...ids, error: apiError });
    } finally {
      lease.release();
      // calls always allowed run now, and the reply goes on
      if (tools && message.status === 'done') this.deps.tools?.afterReply(chat.id, message.id);
      events.chatChanged.emit({ chatId: chat.id, change: 'updated' });
    }
  }
}
