// The one error shape of PowerApi: a method fails with { code, message }. A transport carries
// it as data and a front door maps the code (the OpenAI layer to HTTP statuses, the CLI to
// exit codes); the message is for people and says what was wrong.
import { z } from 'zod';

export const API_ERROR_CODES = [
  /** the input is malformed or names something unusable (not a model, a bad value) */
  'bad-input',
  /** no chat, message, model or profile with that id */
  'not-found',
  /** another reply is streaming (one engine, one reply at a time) or a load is in progress */
  'busy',
  /** valid but not servable: a strategy the model cannot serve, an incompatible draft, FR */
  'unsupported',
  /** the engine host died; the reply in flight kept what was committed */
  'engine-crashed',
  /** stopped by the user (or by close) before it completed */
  'cancelled',
  /** the device cannot run it: no CUDA device, not enough memory */
  'device',
  /** a bug or an unexpected failure */
  'internal',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export const ApiError = z.object({ code: z.enum(API_ERROR_CODES), message: z.string() });
export type ApiError = z.infer<typeof ApiError>;

/** What the service throws; `toApiError` turns anything thrown into the wire shape. */
export class PowerError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PowerError';
  }

  toJSON(): ApiError {
    return { code: this.code, message: this.message };
  }
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof PowerError) return error.toJSON();
  const parsed = ApiError.safeParse(error);
  if (parsed.success) return parsed.data;
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
}
