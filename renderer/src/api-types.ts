// The contract's types as the renderer uses them (all from app/: the renderer's only import).
import type { z } from 'zod';

import type { ApiRound, ReplyStats, TokenEvent } from '../../app/api/generation.js';
import type { AssistantMessage, Chat, ChatMessage, ChatSampling, ChatSummary, ReplyToken } from '../../app/api/chats.js';
import type { DraftCandidate, MemoryEstimate, ModelEntry } from '../../app/api/models.js';
import type { EngineState, LoadOptions } from '../../app/api/engine.js';
import type { ProfileEntry, ProfileList } from '../../app/api/profiles.js';
import type { StrategyTable } from '../../app/api/common.js';
import type { GenerationBackend } from '../../app/generation-result.js';

export type { ApiError, ApiErrorCode, PowerApi } from '../../app/api/index.js';
export type { Strategy } from '../../app/strategies.js';
export type { ApiRound, AssistantMessage, GenerationBackend, Chat, ChatMessage, ChatSampling, ChatSummary, EngineState, MemoryEstimate, ModelEntry, ProfileEntry, ReplyStats, TokenEvent };
export type Token = z.infer<typeof ReplyToken>;
export type Draft = z.infer<typeof DraftCandidate>;
export type Strategies = z.infer<typeof StrategyTable>;
export type Profiles = z.infer<typeof ProfileList>;
export type LoadRequest = z.input<typeof LoadOptions>;
export type FlashAttnChoice = 'auto' | 'on' | 'off';
