// Engine and API errors in words, with what to do about them, shown where the user is looking.
import type { ApiError, ApiErrorCode } from '../api-types.js';

export interface Notice {
  /** what the user was doing ("Loading target", "Sending") */
  title: string;
  /** what went wrong, in the service's words */
  message: string;
  /** what to do next */
  action: string;
  code: ApiErrorCode;
}

const ACTIONS: Record<ApiErrorCode, string> = {
  'bad-input': 'Check the values you entered and try again.',
  'not-found': 'It may have been removed in another window: pick it again from the list.',
  busy: 'Wait for the current reply or load to finish, or press Stop.',
  unsupported: 'Choose another draft method, draft model or profile: this combination cannot be served.',
  'engine-crashed': 'The engine restarted and nothing was lost: send again and the model reloads by itself.',
  cancelled: 'Stopped. Send or Regenerate to continue.',
  device: 'Lower GPU layers, turn Flash Attention off, or pick a smaller model.',
  internal: 'This is a bug in Power. Export the report and include it when you tell us.',
};

function asApiError(error: unknown): ApiError {
  if (error && typeof error === 'object' && 'code' in error && 'message' in error) {
    const { code, message } = error as { code: unknown; message: unknown };
    if (typeof code === 'string' && code in ACTIONS && typeof message === 'string') return { code: code as ApiErrorCode, message };
  }
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
}

/** A notice for anything a PowerApi call threw (an ApiError, a PowerError or something else). */
export function describeError(title: string, error: unknown): Notice {
  const { code, message } = asApiError(error);
  return { title, message, action: ACTIONS[code], code };
}

export function connectionLost(): Notice {
  return {
    title: 'Connection lost',
    message: 'The connection to Power closed.',
    action: 'Check that `power serve` is still running, then reload this page.',
    code: 'internal',
  };
}
