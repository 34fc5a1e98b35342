// The contract's types as the renderer uses them (all from app/contract/: the renderer's only import).
import type { z } from 'zod';

import type { ApiRound, ReplyStats, RoundsEvent } from '../../app/contract/api/generation.js';
import type { AssistantMessage, Chat, ChatMessage, ChatSampling, ChatSummary, ReplyToken } from '../../app/contract/api/chats.js';
import type { DraftCandidate, MemoryEstimate, ModelEntry } from '../../app/contract/api/models.js';
import type { DevicesReport, EngineState, LoadOptions, SuffixStoreState } from '../../app/contract/api/engine.js';
import type { DownloadEntry } from '../../app/contract/api/downloads.js';
import type { RecommendedPair } from '../../app/contract/recommended-models.js';
import type { ProfileEntry } from '../../app/contract/api/profiles.js';
import type { StrategyTable } from '../../app/contract/api/common.js';
import type { EngineEvidence } from '../../app/contract/generation-result.js';
import type { ChatImage } from '../../app/contract/images.js';
import type { mcp } from '../../app/contract/api/mcp.js';

export type { ApiError, ApiErrorCode, PowerApi } from '../../app/contract/api/index.js';
export type { Strategy } from '../../app/contract/strategies.js';
export type { ChatToolCall, McpServerConfig, McpServerEntry, McpTool, ToolCallDecision } from '../../app/contract/api/mcp.js';
export type {
  ApiRound,
  AssistantMessage,
  DevicesReport,
  DownloadEntry,
  EngineEvidence,
  RecommendedPair,
  Chat,
  ChatImage,
  ChatMessage,
  ChatSampling,
  ChatSummary,
  EngineState,
  MemoryEstimate,
  ModelEntry,
  ProfileEntry,
  ReplyStats,
  RoundsEvent,
  SuffixStoreState,
};
export type Token = z.infer<typeof ReplyToken>;
export type Draft = z.infer<typeof DraftCandidate>;
export type Strategies = z.infer<typeof StrategyTable>;
export type LoadRequest = z.input<typeof LoadOptions>;
export type FlashAttnChoice = 'auto' | 'on' | 'off';
export type DeviceInfo = DevicesReport['flavours'][number]['devices'][number];
export type UserMessage = Extract<ChatMessage, { role: 'user' }>;
export type ImportMcpResult = z.infer<typeof mcp.methods.importConfig.output>;
