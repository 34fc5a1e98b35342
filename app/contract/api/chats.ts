// chats: conversations stored in the data folder. A reply streams through the generation
// events; the methods that start one return as soon as it is accepted.
import { z } from 'zod';

import { GRAMMAR_MAX_CHARS, SAMPLING_DEFAULTS as D, SamplingPath, StopReason, TokenOrigin } from '../engine-types.js';
import { EngineEvidence } from '../generation-result.js';
import { ChatImage, ImageData, IMAGES_PER_MESSAGE, ImageType, Sha256Hex } from '../images.js';
import { STRATEGIES } from '../strategies.js';
import { concern } from './describe.js';
import { ApiError } from './errors.js';
import { ApiRound, ReplyStats, ReplyThinking } from './generation.js';
import { ChatToolCall, McpServerName } from './mcp.js';
import { DraftingPolicy, Fallbacks, Id, None, Ok, Time } from './common.js';

/** whether `text` is JSON whose value is an object (what a JSON schema is) */
export function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Sampling for one reply (temperature 0 is greedy; a stochastic reply without a seed gets a random one). */
export const ChatSampling = z.object({
  temperature: z.number().min(0).max(100).default(D.temperature),
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  topK: z.number().int().min(0).max(1_000_000).default(D.topK),
  topP: z.number().gt(0).max(1).default(D.topP),
  minP: z.number().min(0).max(1).default(D.minP),
  repeatPenalty: z.number().gt(0).max(100).default(D.repeatPenalty),
  maxTokens: z.number().int().min(1).max(1_000_000).default(512),
  /** where tokens are sampled: auto (the backend when the target is on a GPU), cpu, backend */
  path: SamplingPath.default('auto'),
  /** the reply's format: free text, or JSON (any object, or one that follows jsonSchema) */
  format: z.enum(['text', 'json']).default('text'),
  /** with format json: the JSON schema (as JSON text) the reply follows */
  jsonSchema: z
    .string()
    .min(1)
    .max(GRAMMAR_MAX_CHARS)
    .refine(isJsonObjectText, { error: 'the JSON schema must be a JSON object' })
    .optional(),
  /** a thinking model thinks before it answers (the template's enable_thinking) */
  thinking: z.boolean().default(true),
  /** the most tokens the thinking may take before llama.cpp's reasoning budget ends it (null: no limit) */
  thinkingBudget: z.number().int().min(0).max(1_000_000).nullable().default(null),
});
export type ChatSampling = z.infer<typeof ChatSampling>;

/** The title of a chat that has none yet. */
export const UNTITLED_CHAT = 'New chat';

/** A chat's title from its first message: the first line, at most 48 characters. */
export function titleFromMessage(content: string): string {
  const line = content.trim().split('\n')[0]!.trim();
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || UNTITLED_CHAT;
}

export const UserMessage = z.object({
  id: Id,
  role: z.literal('user'),
  content: z.string(),
  createdAt: Time,
  /** images attached to the message, in order (absent: none); their bytes are in the data folder, by sha256 */
  images: z.array(ChatImage).max(IMAGES_PER_MESSAGE).optional(),
});
export type UserMessage = z.infer<typeof UserMessage>;

export const ReplyToken = z.object({ id: z.number().int(), text: z.string(), origin: TokenOrigin, round: z.number().int().min(1) });
export type ReplyToken = z.infer<typeof ReplyToken>;

/** What ran a reply, recorded when it started (the chat report's environment comes from it). */
export const ReplyEnvironment = z.object({
  backend: EngineEvidence,
  contextSize: z.number().int().min(0),
  /** CPU threads the session's graphs ran on */
  threads: z.number().int().min(0),
  batchSize: z.number().int().min(0),
  /** the CUDA devices the engine registered */
  gpus: z.array(z.object({ name: z.string(), description: z.string(), memoryBytes: z.number().min(0) })),
});
export type ReplyEnvironment = z.infer<typeof ReplyEnvironment>;

export const AssistantMessage = z.object({
  id: Id,
  role: z.literal('assistant'),
  content: z.string(),
  createdAt: Time,
  status: z.enum(['streaming', 'done', 'stopped', 'error']),
  stopReason: StopReason.nullable(),
  error: ApiError.nullable(),
  tokens: z.array(ReplyToken),
  rounds: z.array(ApiRound),
  stats: ReplyStats.nullable(),
  digest: z.string().nullable(),
  profile: z.object({ id: Id, name: z.string() }).nullable(),
  strategy: z.enum(STRATEGIES),
  /** a chain's members after `strategy` (absent: one strategy); rounds say which member drafted them */
  fallbacks: Fallbacks.optional(),
  k: z.number().int().nullable(),
  s: z.number().int().nullable(),
  /** FR: the MTP head drafted among the first frVocab tokens (absent: all) */
  frVocab: z.number().int().min(1).optional(),
  ...DraftingPolicy,
  model: z.object({ id: Id, name: z.string(), sha256: z.string().nullable() }),
  draft: z.object({ id: Id, name: z.string() }).nullable(),
  /** the seed actually used (null when greedy) and the rest of the settings */
  sampling: ChatSampling.extend({ seed: z.number().int().nullable() }),
  /** absent in replies saved before Power recorded it (chat documents of version 1 called it `runtime`) */
  environment: ReplyEnvironment.optional(),
  /** a thinking model's reasoning; `content` is then the answer alone (absent: the reply did not think) */
  thinking: ReplyThinking.optional(),
  /** the tools the reply called (MCP), each with its approval and result; the next reply goes on from their results (absent: none) */
  toolCalls: z.array(ChatToolCall).optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const ChatMessage = z.discriminatedUnion('role', [UserMessage, AssistantMessage]);
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * The versions of a conversation after one of its messages (`after`; null: from the chat's
 * start), made by Regenerate, the A/B and Edit: the shown one is in `Chat.messages`, the others
 * are kept here whole (a version is everything that follows `after` in it). Versions deeper in
 * a kept one keep their own entries, keyed by its messages' ids.
 */
export const ChatBranch = z
  .object({
    after: Id.nullable(),
    /** the versions not shown, in the order they were made */
    tails: z.array(z.array(ChatMessage).min(1)).min(1),
    /** where the shown version stands among all of them, in the order they were made (0-based) */
    shown: z.number().int().min(0),
  })
  .refine((b) => b.shown <= b.tails.length, { error: 'a branch shows one of its tails.length + 1 versions', path: ['shown'] });
export type ChatBranch = z.infer<typeof ChatBranch>;

/** The fields a chat and its summary in the chat list share, so that the two never drift apart. */
const ChatHeader = {
  id: Id,
  title: z.string(),
  createdAt: Time,
  updatedAt: Time,
};

export const Chat = z.object({
  ...ChatHeader,
  systemPrompt: z.string().nullable(),
  /** the thinking switch and budget its replies were last asked for (absent: never asked; the profile's, else on, no budget) */
  thinking: z.object({ enabled: z.boolean(), budget: z.number().int().min(0).max(1_000_000).nullable() }).optional(),
  /** the conversation shown: the versions on show at each branch (the prompt is built from it) */
  messages: z.array(ChatMessage),
  /** the other versions, one entry per point where the conversation branched (absent: none) */
  branches: z.array(ChatBranch).optional(),
  /** the MCP servers whose tools this chat offers its model (absent: none) */
  mcpServers: z.array(McpServerName).optional(),
});
export type Chat = z.infer<typeof Chat>;

export const ChatSummary = z.object({
  ...ChatHeader,
  messages: z.number().int(),
  streaming: z.boolean(),
});
export type ChatSummary = z.infer<typeof ChatSummary>;

const ChatRef = z.object({ chatId: Id });
const ReplyOptions = {
  /**
   * the reply's settings over the defaults; thinking and thinkingBudget take no default here:
   * absent, the chat's last ones apply, else the profile's (app/service/chat-replies.ts)
   */
  sampling: ChatSampling.extend({
    thinking: z.boolean().optional(),
    thinkingBudget: z.number().int().min(0).max(1_000_000).nullable().optional(),
  })
    .partial()
    .optional(),
  /** absent: the active profile */
  profileId: Id.optional(),
};
const Started = z.object({ userMessageId: Id, assistantMessageId: Id });
/** images added before (chats.addImage), by their sha256, in the order the message shows them */
const ImageRefs = z
  .array(z.object({ sha256: Sha256Hex, name: z.string().max(255).optional() }))
  .max(IMAGES_PER_MESSAGE, { error: `at most ${IMAGES_PER_MESSAGE} images per message` });

export const chats = concern({
  methods: {
    create: { input: z.object({ title: z.string().max(200).optional(), systemPrompt: z.string().max(100_000).optional() }), output: Chat },
    list: { input: None, output: z.object({ chats: z.array(ChatSummary) }) },
    get: { input: ChatRef, output: Chat },
    rename: { input: z.object({ chatId: Id, title: z.string().min(1).max(200) }), output: ChatSummary },
    /** a chat whose reply is streaming is stopped first (the reply ends as cancelled), then deleted */
    delete: { input: ChatRef, output: Ok },
    /**
     * adds a user message and starts the reply; `busy` while another reply streams. A reply the
     * loaded model cannot give to the message's images (no projector, one the engine refuses) is an
     * error reply: the message and its images stay in the chat
     */
    send: {
      input: z
        .object({
          chatId: Id,
          content: z.string().max(1_000_000),
          images: ImageRefs.optional(),
          /** replaces the chat's system prompt (null removes it) */
          systemPrompt: z.string().max(100_000).nullable().optional(),
          ...ReplyOptions,
        })
        .refine((p) => p.content.trim() !== '' || (p.images?.length ?? 0) > 0, {
          error: 'a message needs text or an image',
          path: ['content'],
        }),
      output: Started,
    },
    /**
     * keeps an image in the data folder (content-addressed: the same image once) for a message
     * to come; an image no chat uses is removed when Power starts again
     */
    addImage: {
      input: z.object({ data: ImageData, name: z.string().max(255).optional() }),
      output: ChatImage,
    },
    /** an image of a message (its thumbnail in the chat) */
    image: { input: z.object({ sha256: Sha256Hex }), output: z.object({ type: ImageType, data: z.string() }) },
    /** stops the chat's streaming reply (it keeps what was generated); false when none streams */
    stop: { input: ChatRef, output: z.object({ stopped: z.boolean() }) },
    /** writes a new version of the last reply; the one it replaces is kept as another version (`Chat.branches`) */
    regenerate: { input: z.object({ chatId: Id, ...ReplyOptions }), output: Started },
    /**
     * a new version of a user message (a new id), replied to; the old one and everything after it
     * are kept as another version. It keeps its images unless `images` replaces them
     */
    editAndContinue: {
      input: z.object({ chatId: Id, messageId: Id, content: z.string().max(1_000_000), images: ImageRefs.optional(), ...ReplyOptions }),
      output: Started,
    },
    /**
     * shows version `to` (0-based, in the order they were made) of the conversation from
     * `messageId` on, the first message of the version shown now; `busy` while the chat's reply streams
     */
    switchBranch: { input: z.object({ chatId: Id, messageId: Id, to: z.number().int().min(0) }), output: Chat },
    /**
     * a new chat holding a copy of the conversation shown up to and including `messageId` (new
     * ids, the system prompt, the images shared), without the other versions
     */
    fork: { input: z.object({ chatId: Id, messageId: Id }), output: Chat },
  },
  events: {
    onChanged: z.object({ chatId: Id, change: z.enum(['created', 'updated', 'deleted']) }),
  },
});
