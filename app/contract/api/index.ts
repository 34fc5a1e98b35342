// PowerApi: the one contract between the service and every front door (Electron IPC, the
// WebSocket of `power serve`, the CLI). Plain data plus zod schemas; transports are
// generated from `powerApi`.
import { chats } from './chats.js';
import type { ApiOf } from './describe.js';
import { downloads } from './downloads.js';
import { engine } from './engine.js';
import { generation } from './generation.js';
import { mcp } from './mcp.js';
import { models } from './models.js';
import { profiles } from './profiles.js';
import { reports } from './reports.js';

export const powerApi = { models, engine, profiles, chats, generation, reports, downloads, mcp };
export type PowerApiDescription = typeof powerApi;
export type PowerApi = ApiOf<PowerApiDescription>;

export { ApiError, API_ERROR_CODES, PowerError, toApiError, type ApiErrorCode } from './errors.js';
export type { ConcernSpec, MethodSpec } from './describe.js';
