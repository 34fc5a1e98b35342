// Small schemas several concerns share.
import { z } from 'zod';

import { STRATEGIES } from '../strategies.js';

export const Id = z.string().min(1).max(200);
/** ISO 8601 time */
export const Time = z.string();
export const None = z.object({}).strict();
export const Ok = z.object({ ok: z.literal(true) });

export const StrategyName = z.enum(STRATEGIES);

export const StrategyAvailability = z.object({ available: z.boolean(), reason: z.string().optional() });
export const StrategyTable = z.record(StrategyName, StrategyAvailability);

export const DeviceRequest = z.enum(['auto', 'cuda', 'vulkan', 'cpu']);
