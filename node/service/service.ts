// The one service behind every front door (CLI, `power serve`, the Electron shell): it
// implements PowerApi over the model library, the supervised engine, profiles and chats.
// Inputs are validated against the contract's schemas here, so every transport gets the
// same answers and the same typed errors.
import { randomInt, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { z } from 'zod';

import { ChatSampling, titleFromMessage, UNTITLED_CHAT, type AssistantMessage, type Chat, type ReplyRuntime } from '../../contract/api/chats.js';
import { PowerError, toApiError, type ApiError } from '../../contract/api/errors.js';
import { powerApi, type PowerApi } from '../../contract/api/index.js';
import type { ReplyStats, TokenEvent, ApiRound } from '../../contract/api/generation.js';
import { strategyAvailability } from '../../contract/strategies.js';
import { SAMPLING_DEFAULTS, type StopReason } from '../../contract/engine-types.js';
import { batchInvariance } from '../../engine/build-info.js';
import { EngineCrashedError } from '../engine/client.js';
import { describeEstimate, estimateMemory } from '../engine/memory-estimate.js';
import { checkDraftCompatibility } from '../models/draft-compat.js';
import { ChatStore, summary } from './chat-store.js';
import { Conversation, promptMessages } from './conversation.js';
import { createCompletions } from './completions.js';
import { EngineSupervisor, type ActiveSession } from './engine-supervisor.js';
import { exportChatReport } from './chat-report.js';
import { Emitter } from './events.js';
import { DownloadManager } from '../models/downloads.js';
import { ModelLibrary } from './library.js';
import { Profiles, resolveProfile } from './profiles.js';
import { runReply, replyStats } from './reply.js';
import { devicesReport } from '../runtime/devices.js';
import { defaultContextSize } from '../runtime/open-model.js';
import { asPowerError, type OpenedTarget } from '../runtime/target.js';
import { SettingsFile } from './settings.js';
import type { PowerService, ServiceOptions } from './types.js';

type Desc = typeof powerApi;
type In<C extends keyof Desc, M extends keyof Desc[C]['methods']> = z.output<Desc[C]['methods'][M] extends { input: infer I extends z.ZodType } ? I : never>;

/** Validates a method's input against the contract (bad input is a typed error, not a crash). */
function input<C extends keyof Desc, M extends keyof Desc[C]['methods'] & string>(c: C, m: M, raw: unknown): In<C, M> {
  const spec = (powerApi[c].methods as Record<string, { input: z.ZodType }>)[m]!;
  const parsed = spec.input.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PowerError('bad-input', `${c}.${m}: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  return parsed.data as In<C, M>;
}

const now = () => new Date().toISOString();

/** Removes the replies after the user message at `userIndex`, keeping them in `superseded` for the report. */
function supersede(chat: Chat, userIndex: number): void {
  const replyTo = chat.messages[userIndex]!.id;
  const removed = chat.messages.splice(userIndex + 1).filter((m): m is AssistantMessage => m.role === 'assistant');
  if (removed.length > 0) chat.superseded = [...(chat.superseded ?? []), ...removed.map((message) => ({ replyTo, message }))];
}

/** What is about to run a reply (the chat report's environment); undefined when the engine says nothing. */
function replyRuntime(supervisor: EngineSupervisor, target: OpenedTarget, session: ActiveSession): ReplyRuntime | undefined {
  const backend = supervisor.state().backend;
  if (!backend) return undefined;
  return {
    backend: { ...backend, flashAttn: session.flashAttn, batchInvariant: batchInvariance(backend.flavour, session.flashAttn) },
    contextSize: target.contextSize,
    threads: session.threads,
    // createSession's default: the service does not change it
    batchSize: 512,
    gpus: target.placement.devices
      .filter((d) => d.backend.toUpperCase() === 'CUDA')
      .map((d) => ({ name: d.name, description: d.description, memoryBytes: d.totalBytes })),
  };
}

interface ActiveReply {
  chatId: string;
  messageId: string;
  sessionId: string | null;
  stopRequested: boolean;
  done: Promise<void>;
}

export async function createPowerService(options: ServiceOptions): Promise<PowerService> {
  await mkdir(options.dataDir, { recursive: true });
  const settings = await SettingsFile.open(options.dataDir);
  const library = await ModelLibrary.open(options.dataDir);
  for (const dir of options.modelsDirs ?? []) await library.add(dir);
  const store = await ChatStore.open(options.dataDir);
  const profiles = new Profiles(settings);
  const supervisor = new EngineSupervisor(library, options.engine);

  const chatChanged = new Emitter<{ chatId: string; change: 'created' | 'updated' | 'deleted' }>();
  const ev = {
    token: new Emitter<TokenEvent>(),
    round: new Emitter<{ chatId: string; messageId: string; round: ApiRound }>(),
    stats: new Emitter<{ chatId: string; messageId: string; stats: ReplyStats }>(),
    done: new Emitter<{ chatId: string; messageId: string; stopReason: StopReason; digest: string; stats: ReplyStats }>(),
    error: new Emitter<{ chatId: string; messageId: string; error: ApiError }>(),
  };

  let active: ActiveReply | null = null;
  let loading = false;
  let closed = false;
  let conversation: { target: object; conv: Conversation } | null = null;

  const loadedTarget = () => {
    const t = supervisor.loaded();
    return t ? { recurrent: t.info.recurrent } : null;
  };

  function claim(chatId: string): ActiveReply {
    if (closed) throw new PowerError('cancelled', 'Power is shutting down');
    if (active) throw new PowerError('busy', `a reply is streaming in chat ${active.chatId}: stop it or wait for it to finish`);
    if (loading) throw new PowerError('busy', 'a model is loading');
    const reply: ActiveReply = { chatId, messageId: '', sessionId: null, stopRequested: false, done: Promise.resolve() };
    active = reply;
    return reply;
  }

  function touch(chat: Chat): void {
    chat.updatedAt = now();
  }

  /**
   * Applies `change` (which leaves a user message last) and starts the reply to it. Everything
   * that can refuse (profile, session, template, prompt size) is checked on a copy first: a
   * refused reply leaves the chat as it was, and readers never see a change that is undone.
   */
  async function startReply(
    reply: ActiveReply,
    chat: Chat,
    change: (c: Chat) => void,
    opts: { sampling?: Partial<z.input<typeof ChatSampling>>; profileId?: string },
  ): Promise<string> {
    try {
      const loadedOptions = supervisor.loadedOptions();
      if (!loadedOptions) throw new PowerError('bad-input', 'no model is loaded: load one first (engine.load)');
      const profile = opts.profileId ? profiles.get(opts.profileId) : profiles.active();
      const resolved = resolveProfile(profile, loadedOptions.method.strategy);
      const { target, session } = await supervisor.sessionFor(resolved.strategy, resolved.k, resolved.s);
      if (!conversation || conversation.target !== target) {
        conversation = { target, conv: new Conversation(target.engine, target.modelId, target.info) };
      }
      const conv = conversation.conv;

      const staged = structuredClone(chat);
      change(staged);
      const text = await conv.render(promptMessages(staged, staged.messages.length));
      const prompt = await conv.tokens(text);
      if (prompt.length + 1 > target.contextSize) {
        throw new PowerError(
          'bad-input',
          `the conversation is ${prompt.length} tokens but the context holds ${target.contextSize}: start a new chat or load the model with a larger context`,
        );
      }
      change(chat);

      const sampling = ChatSampling.parse(opts.sampling ?? {});
      const seed = sampling.seed ?? (sampling.temperature > 0 ? randomInt(0, 0xffffffff) : null);
      const entry = library.get(loadedOptions.modelId);
      const draftEntry = loadedOptions.method.draftId ? library.get(loadedOptions.method.draftId) : null;
      const speculative = resolved.strategy !== 'none';
      const runtime = replyRuntime(supervisor, target, session);
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
        k: speculative ? session.k : null,
        s: speculative ? session.s : null,
        model: { id: entry.id, name: entry.name, sha256: entry.sha256.state === 'done' ? entry.sha256.hex : null },
        draft: speculative && draftEntry ? { id: draftEntry.id, name: draftEntry.name } : null,
        sampling: { ...sampling, seed },
        ...(runtime ? { runtime } : {}),
      };
      chat.messages.push(message);
      touch(chat);
      reply.messageId = message.id;
      reply.sessionId = session.sessionId;
      await store.save(chat);
      chatChanged.emit({ chatId: chat.id, change: 'updated' });

      const ids = { chatId: chat.id, messageId: message.id };
      supervisor.setStatus('generating');
      reply.done = (async () => {
        try {
          const running = runReply(
            target.engine,
            {
              sessionId: session.sessionId,
              prompt,
              maxTokens: sampling.maxTokens,
              // the chat's settings over the engine's defaults (penalty window, presence, frequency)
              sampling: {
                ...SAMPLING_DEFAULTS,
                temperature: sampling.temperature,
                seed: seed ?? 0,
                topK: sampling.topK,
                topP: sampling.topP,
                minP: sampling.minP,
                repeatPenalty: sampling.repeatPenalty,
              },
            },
            message,
            {
              token: (t) => ev.token.emit({ ...ids, ...t }),
              round: (r) => ev.round.emit({ ...ids, round: r }),
              stats: (s) => ev.stats.emit({ ...ids, stats: s }),
            },
          );
          // stopped while it was being set up: the request is in the engine now, cancel it
          if (reply.stopRequested) void target.engine.call('cancel', { sessionId: session.sessionId }).catch(() => {});
          const { native, rounds } = await running;
          const stats = replyStats(native, rounds, true);
          message.stats = stats;
          message.stopReason = native.stopReason;
          message.status = native.stopReason === 'cancelled' ? 'stopped' : 'done';
          conv.remember({ text, tokens: prompt }, { text: message.content, tokens: message.tokens.map((t) => t.id) });
          touch(chat);
          await store.save(chat);
          if (supervisor.loaded()) supervisor.setStatus('ready');
          ev.done.emit({ ...ids, stopReason: native.stopReason, digest: message.digest!, stats });
        } catch (error) {
          const mapped = asPowerError(error);
          const apiError = toApiError(mapped);
          if (error instanceof EngineCrashedError) {
            supervisor.crashed(error.message);
            apiError.message = `the engine stopped during this reply; the ${message.tokens.length} tokens before it are kept, and the model reloads on the next request (${error.message})`;
          }
          message.status = 'error';
          message.error = apiError;
          conv.remember({ text, tokens: prompt }, null);
          touch(chat);
          await store.save(chat).catch(() => {});
          if (supervisor.loaded()) supervisor.setStatus('ready');
          ev.error.emit({ ...ids, error: apiError });
        } finally {
          active = null;
          chatChanged.emit({ chatId: chat.id, change: 'updated' });
        }
      })();
      return message.id;
    } catch (error) {
      active = null;
      throw asPowerError(error);
    }
  }

  async function stopActive(): Promise<boolean> {
    const reply = active;
    if (!reply) return false;
    reply.stopRequested = true;
    // a reply still setting up has no request in the engine yet: keep asking until it ends
    // (a cancel that arrives before the request starts is a no-op in the engine)
    while (active === reply) {
      const target = supervisor.loaded();
      if (target && reply.sessionId) await target.engine.call('cancel', { sessionId: reply.sessionId }).catch(() => {});
      const tick = new Promise((resolve) => setTimeout(resolve, 50));
      // until the request is started, `done` is not yet the reply's: wait a tick
      await (reply.sessionId ? Promise.race([reply.done, tick]) : tick);
    }
    return true;
  }

  // stateless completions (the OpenAI API of power serve) share the one reply slot with chats:
  // they wait their turn instead of failing busy, and close() stops them like a chat reply
  const completions = createCompletions({
    supervisor,
    library,
    profiles,
    acquire: async () => {
      for (;;) {
        if (closed) throw new PowerError('cancelled', 'Power is shutting down');
        if (!active && !loading) return claim('');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    release: (slot) => {
      if (active === slot) active = null;
    },
  });

  // a finished download joins the library like a file the user adds
  const downloads = new DownloadManager({
    dir: join(options.dataDir, 'models'),
    addToLibrary: async (path) => {
      const { added, skipped } = await library.add(path);
      if (added[0]) return added[0].id;
      throw new Error(skipped[0]?.reason ?? 'not added');
    },
  });

  const api: PowerApi = {
    downloads: downloads.api,
    models: {
      list: async (raw) => (input('models', 'list', raw), { entries: library.list() }),
      get: async (raw) => library.get(input('models', 'get', raw).modelId),
      add: async (raw) => library.add(input('models', 'add', raw).path),
      remove: async (raw) => {
        const { modelId } = input('models', 'remove', raw);
        const loaded = supervisor.loadedOptions();
        if (loaded && (loaded.modelId === modelId || loaded.method.draftId === modelId)) {
          throw new PowerError('busy', 'the model is loaded: unload it first');
        }
        await library.remove(modelId);
        return { ok: true as const };
      },
      drafts: async (raw) => {
        const { targetId } = input('models', 'drafts', raw);
        const target = await library.gguf(targetId);
        const drafts = [];
        for (const entry of library.list()) {
          if (entry.id === targetId) continue;
          let gguf;
          try {
            gguf = await library.gguf(entry.id);
          } catch (error) {
            drafts.push({ modelId: entry.id, name: entry.name, strategy: 'draft-model', compatible: false, reason: (error as Error).message });
            continue;
          }
          const check = checkDraftCompatibility(target, gguf);
          // the kind names the strategy it serves (a dflash file with a Markov head is dspark)
          drafts.push({ modelId: entry.id, name: entry.name, strategy: check.kind, compatible: check.compatible, ...(check.reason ? { reason: check.reason } : {}) });
        }
        return { drafts };
      },
      strategies: async (raw) => {
        const { targetId, draftId } = input('models', 'strategies', raw);
        const target = await library.gguf(targetId);
        const facts = library.get(targetId).facts;
        const draft = draftId ? checkDraftCompatibility(target, await library.gguf(draftId)) : undefined;
        return strategyAvailability({ nextnLayers: facts?.nextnLayers ?? 0, ...(draft ? { draft } : {}) });
      },
      estimate: async (raw) => {
        const p = input('models', 'estimate', raw);
        const target = await library.gguf(p.targetId);
        const plan = {
          target,
          ...(p.draftId ? { draft: await library.gguf(p.draftId) } : {}),
          contextSize: p.contextSize ?? defaultContextSize(library.get(p.targetId).facts?.contextLength ?? 0),
          batchSize: 512,
          gpuLayers: p.gpuLayers,
          s: p.s,
          flashAttn: p.flashAttn,
          loadMtp: p.loadMtp,
        };
        const e = estimateMemory(plan);
        return { ...e, contextSize: plan.contextSize, description: describeEstimate(e, plan) };
      },
      onLibraryChanged: library.changed.on,
    },

    engine: {
      load: async (raw) => {
        const p = input('engine', 'load', raw);
        library.get(p.modelId);
        if (p.method.draftId) library.get(p.method.draftId);
        if (active) throw new PowerError('busy', 'a reply is streaming: stop it before loading another model');
        if (loading) throw new PowerError('busy', 'a model is loading');
        loading = true;
        try {
          const state = await supervisor.load(p);
          settings.data.lastLoad = p;
          await settings.save();
          return state;
        } catch (error) {
          throw asPowerError(error);
        } finally {
          loading = false;
        }
      },
      unload: async (raw) => {
        input('engine', 'unload', raw);
        if (active) throw new PowerError('busy', 'a reply is streaming: stop it before unloading');
        return supervisor.unload();
      },
      state: async (raw) => (input('engine', 'state', raw), supervisor.state()),
      devices: async (raw) => (input('engine', 'devices', raw), devicesReport()),
      onLoadProgress: supervisor.loadProgress.on,
      onStateChanged: supervisor.stateChanged.on,
    },

    profiles: {
      list: async (raw) => (input('profiles', 'list', raw), profiles.list()),
      select: async (raw) => profiles.select(input('profiles', 'select', raw).profileId),
      create: async (raw) => profiles.create(input('profiles', 'create', raw), loadedTarget()),
      delete: async (raw) => {
        await profiles.delete(input('profiles', 'delete', raw).profileId);
        return { ok: true as const };
      },
      importToml: async (raw) => {
        const p = input('profiles', 'importToml', raw);
        return profiles.importToml(p.name, p.toml, loadedTarget());
      },
      exportToml: async (raw) => ({
        toml: profiles.exportToml(input('profiles', 'exportToml', raw).profileId, supervisor.loadedOptions()?.method.strategy ?? null),
      }),
      onChanged: profiles.changed.on,
    },

    chats: {
      create: async (raw) => {
        const p = input('chats', 'create', raw);
        const t = now();
        const chat: Chat = { id: randomUUID(), title: p.title ?? UNTITLED_CHAT, createdAt: t, updatedAt: t, systemPrompt: p.systemPrompt ?? null, messages: [] };
        await store.add(chat);
        chatChanged.emit({ chatId: chat.id, change: 'created' });
        return structuredClone(chat);
      },
      list: async (raw) => (input('chats', 'list', raw), { chats: store.list(active?.chatId ?? null) }),
      get: async (raw) => structuredClone(store.get(input('chats', 'get', raw).chatId)),
      rename: async (raw) => {
        const p = input('chats', 'rename', raw);
        const chat = store.get(p.chatId);
        chat.title = p.title;
        touch(chat);
        await store.save(chat);
        chatChanged.emit({ chatId: chat.id, change: 'updated' });
        return summary(chat, active?.chatId === chat.id);
      },
      delete: async (raw) => {
        const { chatId } = input('chats', 'delete', raw);
        store.get(chatId);
        if (active?.chatId === chatId) await stopActive();
        await store.delete(chatId);
        chatChanged.emit({ chatId, change: 'deleted' });
        return { ok: true as const };
      },
      send: async (raw) => {
        const p = input('chats', 'send', raw);
        const chat = store.get(p.chatId);
        const reply = claim(chat.id);
        const userMessage = { id: randomUUID(), role: 'user' as const, content: p.content, createdAt: now() };
        const assistantMessageId = await startReply(
          reply,
          chat,
          (c) => {
            if (p.systemPrompt !== undefined) c.systemPrompt = p.systemPrompt;
            c.messages.push({ ...userMessage });
            if (c.title === UNTITLED_CHAT) c.title = titleFromMessage(p.content);
          },
          { ...(p.sampling ? { sampling: p.sampling } : {}), ...(p.profileId ? { profileId: p.profileId } : {}) },
        );
        return { userMessageId: userMessage.id, assistantMessageId };
      },
      stop: async (raw) => {
        const { chatId } = input('chats', 'stop', raw);
        store.get(chatId);
        if (active?.chatId !== chatId) return { stopped: false };
        return { stopped: await stopActive() };
      },
      regenerate: async (raw) => {
        const p = input('chats', 'regenerate', raw);
        const chat = store.get(p.chatId);
        const reply = claim(chat.id);
        let userIndex = chat.messages.length - 1;
        while (userIndex >= 0 && chat.messages[userIndex]!.role !== 'user') userIndex--;
        if (userIndex < 0) {
          active = null;
          throw new PowerError('bad-input', 'the chat has no user message to reply to');
        }
        const assistantMessageId = await startReply(
          reply,
          chat,
          (c) => supersede(c, userIndex),
          { ...(p.sampling ? { sampling: p.sampling } : {}), ...(p.profileId ? { profileId: p.profileId } : {}) },
        );
        return { userMessageId: chat.messages[userIndex]!.id, assistantMessageId };
      },
      editAndContinue: async (raw) => {
        const p = input('chats', 'editAndContinue', raw);
        const chat = store.get(p.chatId);
        const index = chat.messages.findIndex((m) => m.id === p.messageId);
        if (index < 0) throw new PowerError('not-found', `no message ${p.messageId} in chat ${p.chatId}`);
        if (chat.messages[index]!.role !== 'user') throw new PowerError('bad-input', 'only a user message can be edited');
        const reply = claim(chat.id);
        const assistantMessageId = await startReply(
          reply,
          chat,
          (c) => {
            // replies kept for the report answered the old text (or a turn dropped now)
            const changed = new Set(c.messages.slice(index).map((m) => m.id));
            if (c.superseded) c.superseded = c.superseded.filter((x) => !changed.has(x.replyTo));
            c.messages.splice(index + 1);
            c.messages[index] = { ...c.messages[index]!, content: p.content } as Chat['messages'][number];
          },
          { ...(p.sampling ? { sampling: p.sampling } : {}), ...(p.profileId ? { profileId: p.profileId } : {}) },
        );
        return { userMessageId: p.messageId, assistantMessageId };
      },
      onChanged: chatChanged.on,
    },

    reports: {
      exportChat: async (raw) => {
        const p = input('reports', 'exportChat', raw);
        return exportChatReport(structuredClone(store.get(p.chatId)), library, p.format);
      },
    },

    generation: {
      active: async (raw) => {
        input('generation', 'active', raw);
        return active && active.messageId ? { chatId: active.chatId, messageId: active.messageId } : null;
      },
      onToken: ev.token.on,
      onRound: ev.round.on,
      onStats: ev.stats.on,
      onDone: ev.done.on,
      onError: ev.error.on,
    },
  };

  return {
    ...api,
    enginePid: () => supervisor.pid(),
    completions,
    close: async () => {
      if (closed) return;
      closed = true;
      await downloads.close();
      await stopActive();
      await supervisor.close();
      await library.close();
      await settings.save();
    },
  };
}
