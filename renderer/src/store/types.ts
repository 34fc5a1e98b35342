// The renderer's state: one zustand store composed from slices (docs/architecture.md).
import type { StateCreator } from 'zustand';

import type {
  Chat,
  ChatImage,
  ImportMcpResult,
  McpServerConfig,
  McpServerEntry,
  ChatSummary,
  DevicesReport,
  DownloadEntry,
  Draft,
  EngineState,
  FlashAttnChoice,
  MemoryEstimate,
  ModelEntry,
  PowerApi,
  ProfileEntry,
  RecommendedPair,
  RoundsEvent,
  Strategies,
  Strategy,
  ToolCallDecision,
} from '../api-types.js';
import type { AbSide } from '../logic/ab.js';
import type { Notice } from '../logic/advice.js';
import type { DeviceChoice } from '../logic/devices.js';
import type { ReplyView } from '../logic/reply.js';
import type { SamplingForm } from '../logic/sampling.js';
import type { ThemeChoice } from '../logic/theme.js';

export interface UiSlice {
  api: PowerApi | null;
  /** 'electron' inside the desktop shell (its File menu adds models with the native dialogs) */
  shell: 'electron' | 'browser';
  connected: boolean;
  notice: Notice | null;
  view: 'chat' | 'report';
  showOrigins: boolean;
  theme: ThemeChoice;
  /** below ~1100 px the side panels are drawers */
  drawer: 'chats' | 'stats' | null;
  modelsOpen: boolean;
  /** an A/B in flight: its chat and the speculative side */
  abPending: { chatId: string; speculative: AbSide } | null;
  setApi(api: PowerApi, shell?: 'electron' | 'browser'): void;
  setDisconnected(): void;
  showNotice(notice: Notice | null): void;
  fail(title: string, error: unknown): void;
  setView(view: 'chat' | 'report'): void;
  setShowOrigins(on: boolean): void;
  setTheme(theme: ThemeChoice): void;
  toggleDrawer(drawer: 'chats' | 'stats'): void;
  setModelsOpen(open: boolean): void;
  runAb(): Promise<void>;
}

export interface LoadProgress {
  target: number;
  draft: number | null;
  /** false once the load ended: the bar keeps the last value the engine reported */
  running: boolean;
}

export interface LibrarySlice {
  models: ModelEntry[];
  targetId: string | null;
  strategies: Strategies | null;
  drafts: Draft[];
  method: Strategy;
  /** a chain: the strategies tried after `method` when it drafts nothing */
  fallbacks: Strategy[];
  draftId: string | null;
  gpuLayers: string;
  contextSize: string;
  threads: string;
  remote: string;
  device: DeviceChoice;
  flashAttn: FlashAttnChoice;
  devices: DevicesReport | null;
  estimate: MemoryEstimate | null;
  estimateError: string | null;
  engine: EngineState | null;
  loadProgress: LoadProgress | null;
  /** the last models.add, in words, and whether it failed */
  addResult: { text: string; failed: boolean } | null;
  /** the method was chosen (by the user, or restored from the loaded engine): a library change keeps it */
  methodPinned: boolean;
  setModels(models: ModelEntry[]): void;
  /** `best`: choose the target's best method (a fresh choice of target) */
  selectTarget(id: string | null, best?: boolean): Promise<void>;
  setMethod(method: Strategy): void;
  /** the chain after the method (invalid members are dropped: the picker offers only valid ones) */
  setFallbacks(fallbacks: Strategy[]): void;
  setDraft(id: string | null): void;
  setLoadField(field: 'gpuLayers' | 'contextSize' | 'threads' | 'remote', text: string): void;
  setDevice(device: DeviceChoice): void;
  setFlashAttn(choice: FlashAttnChoice): void;
  refreshEstimate(): Promise<void>;
  refreshDevices(): Promise<void>;
  load(): Promise<void>;
  unload(): Promise<void>;
  setEngine(state: EngineState): void;
  setLoadProgress(role: 'target' | 'draft', progress: number): void;
  addModels(kind: 'file' | 'folder', path: string): Promise<boolean>;
  removeModel(id: string): Promise<void>;
}

export interface DownloadsSlice {
  recommended: RecommendedPair[];
  downloads: DownloadEntry[];
  downloadError: string | null;
  refreshDownloads(): Promise<void>;
  startDownload(files: ReadonlyArray<{ url: string; fileName?: string; sha256?: string | null; sizeBytes?: number }>): Promise<void>;
  cancelDownload(id: string): Promise<void>;
  setDownload(entry: DownloadEntry): void;
}

export interface ProfilesSlice {
  profiles: ProfileEntry[];
  activeProfileId: string | null;
  /** what the Profile picker shows: a profile id, or 'custom' while the K/S form is in use */
  profileChoice: string | null;
  customK: string;
  customS: string;
  /** p-min as typed (empty: off) */
  customPMin: string;
  customAdaptiveK: boolean;
  /** FR's vocabulary N as typed (empty: the whole vocabulary) */
  customFr: string;
  /** Apply was pressed: the form's errors are shown */
  customTried: boolean;
  setProfiles(profiles: ProfileEntry[], activeId: string): void;
  chooseProfile(choice: string): Promise<void>;
  setCustomField(field: 'k' | 's' | 'pMin' | 'frVocab', text: string): void;
  setCustomAdaptiveK(on: boolean): void;
  selectProfile(id: string): Promise<void>;
  applyCustom(): Promise<void>;
}

export interface ChatsSlice {
  chats: ChatSummary[];
  chatId: string | null;
  chat: Chat | null;
  /** replies built from the generation events, by assistant message id */
  live: Record<string, ReplyView>;
  /** the reply being written, if any (one engine: one at a time) */
  streaming: { chatId: string; messageId: string } | null;
  /** the reply the Acceptance panel shows (null: the streaming one, else the last) */
  selectedReplyId: string | null;
  systemPrompt: string;
  sampling: SamplingForm;
  setSamplingField(field: keyof SamplingForm, value: string): void;
  setSystemPrompt(text: string): void;
  selectReply(id: string | null): void;
  refreshChats(): Promise<void>;
  openChat(id: string | null): Promise<void>;
  refreshChat(): Promise<void>;
  newChat(): Promise<void>;
  renameChat(id: string, title: string): Promise<void>;
  deleteChat(id: string): Promise<void>;
  /** sends the message with the images attached before (attachImage) */
  send(content: string, images?: readonly ChatImage[]): Promise<boolean>;
  /** keeps an image file in the service for the message being written: its record and a data: URL of it, or null (the notice says why) */
  attachImage(file: File, pending: number): Promise<{ image: ChatImage; src: string } | null>;
  stop(): Promise<void>;
  regenerate(): Promise<void>;
  /** a new version of a user message (text and images), replied to; the old one stays as another version */
  editAndContinue(messageId: string, content: string, images: readonly ChatImage[]): Promise<boolean>;
  /** shows version `to` (0-based) of the conversation from `messageId` (the first message of the version shown) on */
  switchBranch(messageId: string, to: number): Promise<void>;
  /** a new chat with the conversation up to and including `messageId`, opened */
  forkChat(messageId: string): Promise<void>;
  /** a batch of generation events (one animation frame's worth) */
  applyLive(events: LiveEvent[]): void;
  finishReply(chatId: string, messageId: string, outcome: ReplyOutcome): Promise<void>;
}

export interface McpSlice {
  /** the configured MCP servers, each with its status and the tools it listed */
  mcpServers: McpServerEntry[];
  /** the MCP servers view is open */
  mcpOpen: boolean;
  /** the view's last action, in words, and whether it failed */
  mcpResult: { text: string; failed: boolean } | null;
  /** the last import: what it added and what it skipped, each with the reason */
  mcpImport: ImportMcpResult | null;
  /** an action of the view is on its way */
  mcpBusy: boolean;
  setMcpOpen(open: boolean): void;
  setMcpServers(servers: McpServerEntry[]): void;
  refreshMcp(): Promise<void>;
  addMcpServer(server: McpServerConfig): Promise<boolean>;
  removeMcpServer(name: string): Promise<void>;
  testMcpServer(name: string): Promise<void>;
  /** the tools a chat offers of the server (undefined: all it lists) */
  setMcpOffered(name: string, enabledTools: string[] | undefined): Promise<void>;
  /** the tool asks before each call again */
  forgetAlwaysAllowed(name: string, tool: string): Promise<void>;
  importMcp(text: string, replace: boolean): Promise<boolean>;
  /** the open chat's servers (an empty page starts a chat for them) */
  setChatMcpServers(servers: string[]): Promise<void>;
  answerToolCall(messageId: string, callId: string, decision: ToolCallDecision): Promise<void>;
}

/** What one hand-over of the engine adds to a streaming reply (generation.onRounds). */
export type LiveEvent = RoundsEvent;

export type ReplyOutcome =
  | { kind: 'done'; digest: string; stats: NonNullable<ReplyView['stats']>; stopReason: NonNullable<ReplyView['stopReason']> }
  | { kind: 'error'; error: NonNullable<ReplyView['error']> };

export type Store = UiSlice & LibrarySlice & DownloadsSlice & ProfilesSlice & ChatsSlice & McpSlice;
export type Slice<T> = StateCreator<Store, [], [], T>;
