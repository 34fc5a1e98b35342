// The renderer's state: one zustand store composed from slices (docs/architecture.md).
import type { StateCreator } from 'zustand';

import type { Chat, ChatSummary, Draft, EngineState, RoundsEvent, FlashAttnChoice, MemoryEstimate, ModelEntry, PowerApi, ProfileEntry, Strategies, Strategy } from '../api-types.js';
import type { AbResult, AbSide } from '../logic/ab.js';
import type { Notice } from '../logic/advice.js';
import type { ReplyView } from '../logic/reply.js';
import type { ReportEntry } from '../logic/report.js';
import type { SamplingField, SamplingForm } from '../logic/sampling.js';

export interface SessionSlice {
  api: PowerApi | null;
  connected: boolean;
  notice: Notice | null;
  view: 'chat' | 'report';
  showOrigins: boolean;
  report: ReportEntry[];
  abRuns: AbResult[];
  /** an A/B in flight: the speculative side, and the control's message once it started */
  abPending: { chatId: string; speculative: AbSide; controlMessageId: string | null } | null;
  setApi(api: PowerApi): void;
  setDisconnected(): void;
  showNotice(notice: Notice | null): void;
  fail(title: string, error: unknown): void;
  setView(view: 'chat' | 'report'): void;
  setShowOrigins(on: boolean): void;
  runAb(): Promise<void>;
}

export interface LibrarySlice {
  models: ModelEntry[];
  targetId: string | null;
  strategies: Strategies | null;
  drafts: Draft[];
  method: Strategy;
  draftId: string | null;
  gpuLayers: string;
  flashAttn: FlashAttnChoice;
  estimate: MemoryEstimate | null;
  estimateError: string | null;
  engine: EngineState | null;
  loadProgress: { target: number; draft: number | null } | null;
  setModels(models: ModelEntry[]): void;
  selectTarget(id: string | null): Promise<void>;
  setMethod(method: Strategy): void;
  setDraft(id: string | null): void;
  setGpuLayers(text: string): void;
  setFlashAttn(choice: FlashAttnChoice): void;
  refreshEstimate(): Promise<void>;
  load(): Promise<void>;
  setEngine(state: EngineState): void;
  setLoadProgress(role: 'target' | 'draft', progress: number): void;
}

export interface ProfilesSlice {
  profiles: ProfileEntry[];
  activeProfileId: string | null;
  setProfiles(profiles: ProfileEntry[], activeId: string): void;
  selectProfile(id: string): Promise<void>;
  applyCustom(k: number, s: number | null): Promise<void>;
}

export interface ChatsSlice {
  chats: ChatSummary[];
  chatId: string | null;
  chat: Chat | null;
  /** replies built from the generation events, by assistant message id */
  live: Record<string, ReplyView>;
  /** the reply being written, if any (one engine: one at a time) */
  streaming: { chatId: string; messageId: string } | null;
  systemPrompt: string;
  sampling: SamplingForm;
  setSamplingField(field: SamplingField, value: string): void;
  setSystemPrompt(text: string): void;
  refreshChats(): Promise<void>;
  openChat(id: string | null): Promise<void>;
  refreshChat(): Promise<void>;
  newChat(): Promise<void>;
  renameChat(id: string, title: string): Promise<void>;
  deleteChat(id: string): Promise<void>;
  send(content: string): Promise<boolean>;
  stop(): Promise<void>;
  regenerate(): Promise<void>;
  /** a batch of generation events (one animation frame's worth) */
  applyLive(events: LiveEvent[]): void;
  finishReply(chatId: string, messageId: string, outcome: ReplyOutcome): Promise<void>;
}

/** What one hand-over of the engine adds to a streaming reply (generation.onRounds). */
export type LiveEvent = RoundsEvent;

export type ReplyOutcome =
  | { kind: 'done'; digest: string; stats: NonNullable<ReplyView['stats']>; stopReason: string }
  | { kind: 'error'; error: NonNullable<ReplyView['error']> };

export type Store = SessionSlice & LibrarySlice & ProfilesSlice & ChatsSlice;
export type Slice<T> = StateCreator<Store, [], [], T>;
