// Tools in the chat: a chat with MCP servers on offers their tools to its model through the one
// tool path of Power (app/service/tool-calls.ts: llama.cpp's template with its grammar and
// parser, or the generic JSON reply), and runs the tool-call loop. A reply that calls a tool
// ends with the call pending; nothing runs until the user answers it (once, always for this
// tool, or deny). Once every call of the reply is answered, the approved ones run through the
// hub, their results (or the refusal, or the error of a server that failed) are stored with the
// call, and a new reply goes on from them.
import { PowerError } from '../contract/api/errors.js';
import type { AssistantMessage, Chat } from '../contract/api/chats.js';
import type { ChatToolCall, ToolCallDecision } from '../contract/api/mcp.js';
import type { StopReason } from '../contract/engine-types.js';
import { McpServerError, type McpHub } from '../mcp/hub.js';
import type { ReplyOptions } from './chat-replies.js';
import type { ChatStore } from './chat-store.js';
import type { Conversation } from './conversation.js';
import type { ServiceEvents } from './events.js';
import type { McpConfigFile } from './mcp-config.js';
import { planPrompt, planTools, type ToolUse } from './tool-calls.js';

/** a turn's tool rounds (replies that called tools since the user's message) after which tools are no longer offered */
export const MAX_TOOL_ROUNDS = 8;

/** what the model reads for a call the user refused */
export const DENIED_RESULT = 'The user denied this tool call.';

/** What a reply with tools needs: its prompt, stop strings and constraint, and how it is read at the end. */
export interface ChatToolPlan {
  prompt: { text: string; tokens: number[] };
  stops: string[];
  sampling: Awaited<ReturnType<typeof planTools>>['sampling'];
  /** reads the whole reply: its answer into `content`, its calls into `toolCalls` (pending, or running where always allowed) */
  finish(message: AssistantMessage, outcome: { tokens: number[]; text: string; stopReason: StopReason }): Promise<void>;
}

export interface ChatToolDeps {
  hub: McpHub;
  config: McpConfigFile;
  store: ChatStore;
  events: ServiceEvents;
  /** the replies, to go on after the calls (set once they exist: they plan with these tools) */
  replies: () => {
    start(chat: Chat, change: (c: Chat) => void, opts: ReplyOptions): Promise<string>;
    streamingChat(): string | null;
  };
  log: (line: string) => void;
}

type Offered = { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } };

/** a function name the template and OpenAI's rules accept (^[A-Za-z0-9_-]{1,64}$) */
function functionName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
}

/**
 * The conversation in OpenAI's form, each call followed by its result, refusal or error. `inline`:
 * for a template that knows no tool turns (no "tool" role), calls and results written as Power's
 * generic JSON reply writes them, in assistant and user turns.
 */
function openAiMessages(chat: Chat, inline = false): ToolUse['messages'] {
  const out: ToolUse['messages'][number][] = [];
  if (chat.systemPrompt) out.push({ role: 'system', content: chat.systemPrompt });
  for (const m of chat.messages) {
    if (m.role === 'user') {
      out.push({ role: 'user', content: m.content });
      continue;
    }
    const calls = m.toolCalls ?? [];
    if (inline && calls.length > 0) {
      const written = calls.map((c) => ({ name: c.name, arguments: parsedOr(c.arguments) }));
      out.push({ role: 'assistant', content: JSON.stringify(written.length === 1 ? { tool_call: written[0] } : { tool_calls: written }) });
      for (const c of calls)
        out.push({ role: 'user', content: JSON.stringify({ tool_response: { tool_call_id: c.id, content: callOutcome(c) } }) });
      continue;
    }
    out.push({
      role: 'assistant',
      content: m.content,
      ...(calls.length > 0
        ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
        : {}),
    });
    for (const c of calls) out.push({ role: 'tool', tool_call_id: c.id, content: callOutcome(c) });
  }
  return out;
}

function parsedOr(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** what the model reads for a call */
function callOutcome(call: ChatToolCall): string {
  if (call.state === 'done') return call.result ?? '';
  if (call.state === 'denied') return DENIED_RESULT;
  if (call.state === 'error') return `Error: ${call.error ?? 'the call failed'}`;
  return 'The call was not run.';
}

/** replies that called tools since the last user message */
function toolRounds(chat: Chat): number {
  let n = 0;
  for (let i = chat.messages.length - 1; i >= 0; i--) {
    const m = chat.messages[i]!;
    if (m.role === 'user') break;
    if ((m.toolCalls?.length ?? 0) > 0) n++;
  }
  return n;
}

export class ChatTools {
  /** per chat, the answer that is running its calls (one at a time per chat) */
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: ChatToolDeps) {}

  /**
   * The plan of a reply in `chat` (the conversation it answers): null where the chat offers no
   * tools and holds no calls (its reply is planned as any other). A server that cannot start
   * offers nothing; its status says why.
   */
  async plan(chat: Chat, conv: Conversation, options: Parameters<typeof planTools>[3] = {}): Promise<ChatToolPlan | null> {
    const servers = (chat.mcpServers ?? []).filter((name) => this.deps.config.data.servers.some((s) => s.name === name));
    const hasCalls = chat.messages.some((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
    if (servers.length === 0 && !hasCalls) return null;
    if (chat.messages.some((m) => m.role === 'user' && (m.images?.length ?? 0) > 0)) {
      if (servers.length > 0) throw new PowerError('unsupported', 'a chat with images cannot use MCP tools yet: turn its servers off');
      return null;
    }
    const listed: { server: string; tool: string; description?: string; schema: Record<string, unknown> }[] = [];
    for (const server of servers) {
      const enabled = this.deps.config.data.servers.find((s) => s.name === server)?.enabledTools;
      try {
        for (const t of await this.deps.hub.tools(server))
          if (!enabled || enabled.includes(t.name))
            listed.push({ server, tool: t.name, ...(t.description ? { description: t.description } : {}), schema: t.inputSchema });
      } catch (error) {
        this.deps.log(`${(error as Error).message}: its tools are not offered`);
      }
    }
    // a tool keeps its own name unless two servers have it: then the server's name comes first
    const count = new Map<string, number>();
    for (const l of listed) count.set(l.tool, (count.get(l.tool) ?? 0) + 1);
    const byName = new Map<string, { server: string; tool: string }>();
    const tools: Offered[] = listed.map((l) => {
      const name = functionName(count.get(l.tool)! > 1 ? `${l.server}__${l.tool}` : l.tool);
      byName.set(name, { server: l.server, tool: l.tool });
      return { type: 'function', function: { name, ...(l.description ? { description: l.description } : {}), parameters: l.schema } };
    });
    const toolChoice = tools.length === 0 || toolRounds(chat) >= MAX_TOOL_ROUNDS ? 'none' : 'auto';
    let plan: Awaited<ReturnType<typeof planTools>>;
    try {
      plan = await planTools(conv, { messages: openAiMessages(chat), tools, toolChoice }, [], options);
    } catch (error) {
      // a template without tool turns refuses the calls and results: they go as generic JSON turns
      if (!hasCalls) throw error;
      plan = await planTools(conv, { messages: openAiMessages(chat, true), tools, toolChoice }, [], options);
    }
    const { tokens, stops } = await planPrompt(conv.engine, conv.modelId, conv, plan);
    const text = plan.prompt.kind === 'text' ? plan.prompt.text : '';
    const config = this.deps.config;
    return {
      prompt: { text, tokens },
      stops,
      sampling: plan.sampling,
      finish: async (message, outcome) => {
        if (outcome.stopReason === 'cancelled') return;
        const read = await plan.read(outcome.tokens, outcome.text, false);
        message.content = read.content;
        if (toolChoice === 'none') return;
        message.toolCalls = read.toolCalls.map((c): ChatToolCall => {
          const target = byName.get(c.name);
          if (!target) {
            return {
              id: c.id,
              name: c.name,
              server: null,
              tool: null,
              arguments: c.arguments,
              state: 'error',
              error: `no tool named ${c.name} is offered`,
            };
          }
          const always = config.data.servers.find((s) => s.name === target.server)?.alwaysAllow.includes(target.tool) ?? false;
          return {
            id: c.id,
            name: c.name,
            ...target,
            arguments: c.arguments,
            state: always ? 'running' : 'pending',
            ...(always ? { approval: 'always' as const } : {}),
          };
        });
        if (message.toolCalls.length === 0) delete message.toolCalls;
      },
    };
  }

  /** After a reply ended: calls that need no answer (always allowed) run at once, and the reply goes on. */
  afterReply(chatId: string, messageId: string): void {
    const message = this.findMessage(chatId, messageId);
    if (!message?.toolCalls?.length || message.toolCalls.some((c) => c.state === 'pending')) return;
    if (message.status !== 'done') return;
    this.proceed(chatId, messageId);
  }

  /** The user's answer to a pending call; once the reply has no pending call, the approved ones run. */
  async answer(chatId: string, messageId: string, callId: string, decision: ToolCallDecision): Promise<void> {
    const { store, events, config } = this.deps;
    const chat = store.get(chatId);
    const message = chat.messages.find((m): m is AssistantMessage => m.id === messageId && m.role === 'assistant');
    if (!message) throw new PowerError('not-found', `no reply ${messageId} in chat ${chatId}`);
    const call = message.toolCalls?.find((c) => c.id === callId);
    if (!call) throw new PowerError('not-found', `no tool call ${callId} in reply ${messageId}`);
    if (call.state !== 'pending') throw new PowerError('bad-input', `the tool call ${callId} was answered already (${call.state})`);
    if (chat.messages.at(-1)?.id !== messageId) throw new PowerError('bad-input', 'only the calls of the last reply can be answered');
    if (this.deps.replies().streamingChat() === chatId) throw new PowerError('busy', 'a reply is streaming in this chat');
    if (decision === 'deny') call.state = 'denied';
    else {
      call.state = 'running';
      call.approval = decision;
      if (decision === 'always' && call.server && call.tool) {
        const server = config.data.servers.find((s) => s.name === call.server);
        if (server && !server.alwaysAllow.includes(call.tool)) {
          server.alwaysAllow.push(call.tool);
          await config.save();
        }
      }
    }
    chat.updatedAt = new Date().toISOString();
    await store.save(chat);
    events.chatChanged.emit({ chatId, change: 'updated' });
    if (!message.toolCalls!.some((c) => c.state === 'pending')) this.proceed(chatId, messageId);
  }

  /** Runs the reply's approved calls, in order, then starts the reply that reads their results. */
  private proceed(chatId: string, messageId: string): void {
    const previous = this.running.get(chatId) ?? Promise.resolve();
    const next = previous
      .then(() => this.runCalls(chatId, messageId))
      .catch((error: unknown) => this.deps.log(`tool calls of chat ${chatId}: ${(error as Error).message}`))
      .finally(() => {
        if (this.running.get(chatId) === next) this.running.delete(chatId);
      });
    this.running.set(chatId, next);
  }

  /** resolves once the chat's calls in flight have run and its next reply has started (tests, close) */
  async settled(chatId: string): Promise<void> {
    await this.running.get(chatId);
  }

  private async runCalls(chatId: string, messageId: string): Promise<void> {
    const { store, events, hub } = this.deps;
    if (!store.has(chatId)) return;
    const chat = store.get(chatId);
    const message = chat.messages.find((m): m is AssistantMessage => m.id === messageId && m.role === 'assistant');
    if (!message?.toolCalls) return;
    for (const call of message.toolCalls) {
      if (call.state !== 'running') continue;
      try {
        let args: unknown;
        try {
          args = JSON.parse(call.arguments || '{}');
        } catch {
          throw new PowerError('bad-input', `the arguments of ${call.name} are not JSON: ${call.arguments}`);
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args))
          throw new PowerError('bad-input', `the arguments of ${call.name} are not a JSON object`);
        call.result = await hub.call(call.server!, call.tool!, args as Record<string, unknown>);
        call.state = 'done';
      } catch (error) {
        call.state = 'error';
        call.error = error instanceof McpServerError || error instanceof PowerError ? error.message : String(error);
      }
      chat.updatedAt = new Date().toISOString();
      await store.save(chat);
      events.chatChanged.emit({ chatId, change: 'updated' });
    }
    // the reply goes on with the results, as the reply that called was sampled
    const { seed, ...sampling } = message.sampling;
    await this.deps.replies().start(chat, () => {}, {
      sampling: { ...sampling, ...(seed !== null ? { seed } : {}) },
      ...(message.profile ? { profileId: message.profile.id } : {}),
    });
  }

  private findMessage(chatId: string, messageId: string): AssistantMessage | null {
    if (!this.deps.store.has(chatId)) return null;
    return this.deps.store.get(chatId).messages.find((m): m is AssistantMessage => m.id === messageId && m.role === 'assistant') ?? null;
  }
}
