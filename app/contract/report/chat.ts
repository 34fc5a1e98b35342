// The report of a chat: one request per assistant reply (every version of the conversation
// included), in the bench report's schema, built with the bench's own builders. A reply pairs
// with an autoregressive (control) reply to the same turn with the same sampling and model:
// the A/B leaves exactly that pair in the chat. The machine's part of the environment comes
// from the caller (the service); what ran each reply comes from the reply itself.
import type { AssistantMessage, Chat, ReplyEnvironment } from '../api/chats.js';
import { everyVersion } from '../branches.js';
import { WARMUP_ROUNDS } from '../generation-result.js';
import { strategyLabel, type Strategy } from '../strategies.js';
import { CONTROL } from './aggregate.js';
import { buildReport } from './build.js';
import { replyParts } from './parts.js';
import { recordFromSamples, roundSample } from './request.js';
import type { ChatReply, ChatSection, Environment, ModelFile, ProfileRun, Report, RequestRecord, RoundSample } from './schema.js';

export const CHAT_CATEGORY = 'chat';

export class ChatReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatReportError';
  }
}

/** The environment less what the replies recorded (backend, settings, GPUs): the caller's machine. */
export type Machine = Omit<Environment, 'backend' | 'settings' | 'gpus' | 'models'>;

export interface ChatReportInput {
  chat: Chat;
  machine: Machine;
  /** the model files of the replies, as far as the library still knows them */
  models: ModelFile[];
  /** what produced the report (RunInfo.command) */
  command: string;
  /** what the caller wants a reader to know (a model gone from the library ...) */
  notes?: string[];
}

export interface ChatReplyRef {
  message: AssistantMessage;
  /** 1-based: the N-th user message of the chat, along the reply's own version */
  turn: number;
  /** another version than the one shown (Regenerate, the A/B's control or an Edit replaced it): not in the conversation */
  superseded: boolean;
  /** the user message it answers (null: none before it): replies to the same one answered the same prompt */
  replyTo: string | null;
}

/** Every reply of every version in conversation order; at a branch, the versions not shown come first. */
export function chatReplies(chat: Chat): ChatReplyRef[] {
  return everyVersion(chat).flatMap(({ message, shown, turn, replyTo }) =>
    message.role === 'assistant' ? [{ message, turn, superseded: !shown, replyTo }] : [],
  );
}

/**
 * Replies that answer the same prompt identically configured: their outputs are comparable. A
 * reply the user stopped is cut short, so it compares with nothing.
 */
function comparisonKey({ message: m, replyTo }: ChatReplyRef): string {
  const s = m.sampling;
  const stopped = m.stopReason === 'cancelled' ? m.id : null;
  return JSON.stringify([replyTo, m.model.id, s.temperature, s.seed, s.topK, s.topP, s.minP, s.repeatPenalty, s.maxTokens, stopped]);
}

/** "turn N", or "turn N (v)" for the v-th distinct sampling/model among the turn's replies. */
function taskNames(list: readonly ChatReplyRef[]): string[] {
  const variants = new Map<number, string[]>();
  return list.map((r) => {
    const seen = variants.get(r.turn) ?? [];
    variants.set(r.turn, seen);
    const key = comparisonKey(r);
    let v = seen.indexOf(key);
    if (v < 0) v = seen.push(key) - 1;
    return v === 0 ? `turn ${r.turn}` : `turn ${r.turn} (${v + 1})`;
  });
}

function ks(m: AssistantMessage): string {
  return m.k === null ? '' : ` K${m.k}${m.s === null ? '' : `/S${m.s}`}`;
}

/** How a reply drafted beyond K and S, as a report profile records it: only what was on. */
function drafting(m: AssistantMessage): Pick<ProfileRun, 'fallbacks' | 'pMin' | 'adaptiveK' | 'frVocab'> {
  return {
    ...(m.fallbacks?.length ? { fallbacks: m.fallbacks } : {}),
    ...(m.pMin ? { pMin: m.pMin } : {}),
    ...(m.adaptiveK ? { adaptiveK: true as const } : {}),
    ...(m.frVocab !== undefined ? { frVocab: m.frVocab } : {}),
  };
}

/**
 * Report profile names: "control" for every autoregressive reply, otherwise the app profile's
 * name, made specific (strategy, K/S, draft, model) where one name covers different settings.
 */
function profileNames(list: readonly ChatReplyRef[]): { names: string[]; profiles: ProfileRun[] } {
  const base = (m: AssistantMessage) => (m.profile?.name ?? `${m.strategy}${ks(m)}`).trim() || m.strategy;
  // the app profile's name is part of it: Balanced and Peak are the same K/S on an attention-only target
  const config = (m: AssistantMessage) => JSON.stringify([base(m), m.strategy, m.k, m.s, m.draft?.id ?? null, m.model.id, drafting(m)]);
  const configsOf = new Map<string, Set<string>>();
  for (const { message: m } of list) {
    if (m.strategy === 'none') continue;
    const set = configsOf.get(base(m)) ?? new Set<string>();
    set.add(config(m));
    configsOf.set(base(m), set);
  }
  const models = new Set(list.map((r) => r.message.model.id));
  const byConfig = new Map<string, string>();
  const taken = new Set<string>([CONTROL]);
  const profiles: ProfileRun[] = [];
  const names = list.map(({ message: m }) => {
    if (m.strategy === 'none') {
      if (!profiles.some((p) => p.name === CONTROL)) profiles.unshift({ name: CONTROL, strategy: 'none', k: null, s: null });
      return CONTROL;
    }
    const known = byConfig.get(config(m));
    if (known) return known;
    let name = base(m);
    if (configsOf.get(name)!.size > 1 || name === CONTROL) {
      name = `${name} (${strategyLabel(m.strategy, m.fallbacks)}${ks(m)}${m.draft ? ` ${m.draft.name}` : ''}${models.size > 1 ? ` @ ${m.model.name}` : ''})`;
    }
    for (let i = 2; taken.has(name); i++) name = `${base(m)} #${i}`;
    taken.add(name);
    byConfig.set(config(m), name);
    profiles.push({ name, strategy: m.strategy, k: m.k, s: m.s, ...drafting(m) });
    return name;
  });
  return { names, profiles };
}

function samples(m: AssistantMessage): RoundSample[] {
  return m.rounds.map((r) => roundSample(r, r.tokenIds.length));
}

/** Why a reply cannot be a request of the report, or null when it can. */
export function leftOut(m: AssistantMessage): string | null {
  if (m.status === 'streaming') return 'still streaming';
  if (m.status === 'error') return `failed (${m.error?.message ?? 'no reason recorded'}): its figures are incomplete`;
  if (!m.stats || !m.digest || !m.stopReason) return 'no figures recorded';
  return null;
}

function mostFrequent(values: readonly Strategy[]): Strategy {
  const counts = new Map<Strategy, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
}

/** Backend, settings and GPUs from what the replies recorded, with a note where they differ. */
function recorded(list: readonly ChatReplyRef[]): Pick<Environment, 'backend' | 'settings' | 'gpus'> & { notes: string[] } {
  const environments = list.map((r) => r.message.environment).filter((x): x is ReplyEnvironment => x !== undefined);
  const notes: string[] = [];
  const first = environments[0];
  if (!first) {
    notes.push('the replies were made before Power recorded what ran them: backend and settings are unknown');
    return { backend: null, settings: null, gpus: [], notes };
  }
  if (environments.length < list.length)
    notes.push(`${list.length - environments.length} of ${list.length} replies do not record what ran them`);
  const describe = (r: ReplyEnvironment) => `${r.backend.device} (${r.backend.flavour})`;
  const backends = [...new Set(environments.map(describe))];
  if (backends.length > 1)
    notes.push(`the replies ran on ${backends.length} backends (${backends.join('; ')}): the environment shows the first`);
  const settingsOf = (r: ReplyEnvironment) => ({
    gpuLayers: r.backend.gpuLayers,
    flashAttn: r.backend.flashAttn,
    contextSize: r.contextSize,
    threads: r.threads,
    batchSize: r.batchSize,
  });
  if (new Set(environments.map((r) => JSON.stringify(settingsOf(r)))).size > 1)
    notes.push("the replies ran with different settings: the environment shows the first reply's");
  const b = first.backend;
  return {
    backend: { device: b.device, kind: b.kind, flavour: b.flavour, note: b.choice },
    settings: settingsOf(first),
    gpus: first.gpus,
    notes,
  };
}

/** The chat's report (throws a ChatReportError when no reply of the chat can be reported). */
export function chatReport(input: ChatReportInput): Report {
  const { chat } = input;
  const all = chatReplies(chat);
  const left: ChatSection['left'] = [];
  const list = all.filter((r) => {
    const why = leftOut(r.message);
    if (why) left.push({ messageId: r.message.id, reason: why });
    return why === null;
  });
  if (list.length === 0) {
    throw new ChatReportError(
      all.length === 0
        ? 'the chat has no reply yet: send a message first'
        : 'the chat has no completed reply to report (they are streaming or failed)',
    );
  }
  const tasks = taskNames(list);
  const { names, profiles } = profileNames(list);
  const requests: Omit<RequestRecord, 'matchesControl'>[] = list.map(({ message: m }, i) =>
    recordFromSamples({
      task: tasks[i]!,
      category: CHAT_CATEGORY,
      profile: names[i]!,
      repeat: 0,
      seed: m.sampling.seed,
      generatedTokens: m.tokens.length,
      stopReason: m.stopReason!,
      digest: m.digest!,
      stats: m.stats!,
      samples: samples(m),
    }),
  );
  const replyInfo: ChatReply[] = list.map(({ message: m, superseded }, i) => ({
    messageId: m.id,
    task: tasks[i]!,
    createdAt: m.createdAt,
    superseded,
    model: m.model.name,
    draft: m.draft?.name ?? null,
    appProfile: m.profile?.name ?? null,
    status: m.status as 'done' | 'stopped',
    sampling: { ...m.sampling },
    ...(m.thinking ? { parts: replyParts(m)! } : {}),
  }));
  const env = recorded(list);
  const first = list[0]!.message;
  const maxTokens = new Set(list.map((r) => r.message.sampling.maxTokens));
  const times = list.map((r) => r.message.createdAt).sort();
  const speculative = list.map((r) => r.message.strategy).filter((s) => s !== 'none');
  return buildReport(
    {
      startedAt: times[0]!,
      finishedAt: chat.updatedAt > times.at(-1)! ? chat.updatedAt : times.at(-1)!,
      command: input.command,
      strategy: mostFrequent(speculative),
      profiles,
      tasks: { name: `chat: ${chat.title}`, count: new Set(tasks).size, categories: [CHAT_CATEGORY] },
      repeat: 1,
      maxTokens: maxTokens.size === 1 ? first.sampling.maxTokens : null,
      temperature: first.sampling.temperature,
      seed: first.sampling.seed,
      warmupRounds: WARMUP_ROUNDS,
      cancelled: false,
    },
    { ...input.machine, backend: env.backend, settings: env.settings, gpus: env.gpus, models: input.models },
    requests,
    {
      id: chat.id,
      title: chat.title,
      createdAt: chat.createdAt,
      updatedAt: chat.updatedAt,
      turns: chat.messages.filter((m) => m.role === 'user').length,
      replies: replyInfo,
      left,
      notes: [...env.notes, ...(input.notes ?? [])],
    },
  );
}

/** The replies of the chat the report covers (the service needs their model files). */
export function reportedMessages(chat: Chat): AssistantMessage[] {
  return chatReplies(chat)
    .map((r) => r.message)
    .filter((m) => leftOut(m) === null);
}
