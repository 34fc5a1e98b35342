// The sampling settings as typed in the form, turned into the contract's ChatSampling (only the
// fields the user filled in; the service's defaults apply to the rest). Bad values are refused
// here with the field's name, before anything is sent.
import { ChatSampling } from '../../../contract/api/chats.js';

export type SamplingForm = Record<SamplingField, string>;
export type SamplingField = 'temperature' | 'topK' | 'topP' | 'minP' | 'repeatPenalty' | 'seed' | 'maxTokens';

export const SAMPLING_LABELS: Record<SamplingField, string> = {
  temperature: 'Temperature',
  topK: 'Top-k',
  topP: 'Top-p',
  minP: 'Min-p',
  repeatPenalty: 'Repeat penalty',
  seed: 'Seed',
  maxTokens: 'Max tokens',
};

const DEFAULTS = ChatSampling.parse({});

/** The form as it opens: the contract's defaults (no seed: a sampled reply draws one). */
export const DEFAULT_SAMPLING_FORM: SamplingForm = {
  temperature: String(DEFAULTS.temperature),
  topK: String(DEFAULTS.topK),
  topP: String(DEFAULTS.topP),
  minP: String(DEFAULTS.minP),
  repeatPenalty: String(DEFAULTS.repeatPenalty),
  seed: '',
  maxTokens: String(DEFAULTS.maxTokens),
};

export type SamplingCheck = { ok: true; sampling: Partial<ChatSampling> } | { ok: false; errors: Partial<Record<SamplingField, string>> };

export function checkSampling(form: SamplingForm): SamplingCheck {
  const values: Record<string, number> = {};
  const errors: Partial<Record<SamplingField, string>> = {};
  for (const field of Object.keys(SAMPLING_LABELS) as SamplingField[]) {
    const text = form[field].trim();
    if (text === '') continue;
    const value = Number(text);
    if (!Number.isFinite(value)) errors[field] = `${SAMPLING_LABELS[field]} must be a number.`;
    else values[field] = value;
  }
  const parsed = ChatSampling.partial().safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path[0] as SamplingField | undefined;
      if (field && !errors[field]) errors[field] = `${SAMPLING_LABELS[field]}: ${issue.message}`;
    }
  }
  if (Object.keys(errors).length > 0 || !parsed.success) return { ok: false, errors };
  return { ok: true, sampling: parsed.data };
}
