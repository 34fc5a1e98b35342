// The sampling settings as typed in the form, turned into the contract's ChatSampling (only the
// fields the user filled in; the service's defaults apply to the rest). Bad values are refused
// here with the field's name, before anything is sent.
import { ChatSampling } from '../../../app/api/chats.js';

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

export const DEFAULT_SAMPLING_FORM: SamplingForm = {
  temperature: '0',
  topK: '40',
  topP: '0.95',
  minP: '0.05',
  repeatPenalty: '1',
  seed: '',
  maxTokens: '256',
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
