// The sampling settings as typed in the form, turned into the contract's ChatSampling (only the
// fields the user filled in; the service's defaults apply to the rest). Bad values are refused
// here with the field's name, before anything is sent.
import { ChatSampling, isJsonObjectText, type Chat } from '../../../app/contract/api/chats.js';
import type { ProfileEntry } from '../../../app/contract/api/profiles.js';

export type SamplingField = 'temperature' | 'topK' | 'topP' | 'minP' | 'repeatPenalty' | 'seed' | 'maxTokens' | 'thinkingBudget';
/** the reply's format: 'text' or 'json', and the JSON schema text (empty: any object) */
export type FormatField = 'format' | 'jsonSchema';
/** a thinking model thinks before it answers: 'on' or 'off' (its budget is a SamplingField: empty, no limit) */
export type ThinkingField = 'thinking';
export type SamplingForm = Record<SamplingField | FormatField | ThinkingField, string>;
/** a field whose value can be refused */
type CheckedField = SamplingField | 'jsonSchema';

export const SAMPLING_LABELS: Record<SamplingField, string> = {
  temperature: 'Temperature',
  topK: 'Top-k',
  topP: 'Top-p',
  minP: 'Min-p',
  repeatPenalty: 'Repeat penalty',
  seed: 'Seed',
  maxTokens: 'Max tokens',
  thinkingBudget: 'Thinking budget',
};

/** The numeric fields of the sampling grid; the thinking budget sits with the thinking switch. */
export const SAMPLING_GRID: readonly SamplingField[] = ['temperature', 'topK', 'topP', 'minP', 'repeatPenalty', 'seed', 'maxTokens'];

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
  format: DEFAULTS.format,
  jsonSchema: '',
  thinking: DEFAULTS.thinking ? 'on' : 'off',
  thinkingBudget: '',
};

/**
 * The thinking fields as a chat opens: the chat's own setting (what its last reply asked), else
 * the active profile's, else on with no limit, the order the service applies them in.
 */
export function thinkingFormOf(
  chat: Pick<Chat, 'thinking'> | null,
  profile: Pick<ProfileEntry, 'thinking' | 'thinkingBudget'> | undefined,
): Pick<SamplingForm, 'thinking' | 'thinkingBudget'> {
  const enabled = chat?.thinking?.enabled ?? profile?.thinking ?? DEFAULTS.thinking;
  const budget = chat?.thinking ? chat.thinking.budget : (profile?.thinkingBudget ?? null);
  return { thinking: enabled ? 'on' : 'off', thinkingBudget: budget === null ? '' : String(budget) };
}

export type SamplingCheck = { ok: true; sampling: Partial<ChatSampling> } | { ok: false; errors: Partial<Record<CheckedField, string>> };

const JSON_SCHEMA_PROBLEM = 'JSON schema must be a JSON object, or empty for any JSON object.';

/** What each field accepts, as the message of a bad value says it. */
export const SAMPLING_RANGES: Record<SamplingField, string> = {
  temperature: 'a number from 0 to 100 (0 is greedy)',
  topK: 'a whole number from 0 to 1000000 (0: off)',
  topP: 'a number above 0, at most 1',
  minP: 'a number from 0 to 1',
  repeatPenalty: 'a number above 0, at most 100 (1: off)',
  seed: 'a whole number from 0 to 4294967295, or empty for a random one',
  maxTokens: 'a whole number from 1 to 1000000',
  thinkingBudget: 'a whole number of tokens from 0 to 1000000, or empty for no limit',
};

export function checkSampling(form: SamplingForm): SamplingCheck {
  const values: Record<string, number | string | boolean> = {};
  const errors: Partial<Record<CheckedField, string>> = {};
  const bad = (field: SamplingField): string => `${SAMPLING_LABELS[field]} must be ${SAMPLING_RANGES[field]}.`;
  const thinking = form.thinking !== 'off';
  values.thinking = thinking;
  for (const field of Object.keys(SAMPLING_LABELS) as SamplingField[]) {
    const text = form[field].trim();
    // a budget for a reply that does not think means nothing: neither checked nor sent
    if (text === '' || (field === 'thinkingBudget' && !thinking)) continue;
    const value = Number(text);
    if (!Number.isFinite(value)) errors[field] = bad(field);
    else values[field] = value;
  }
  if (form.format === 'json') {
    values.format = 'json';
    const schema = form.jsonSchema.trim();
    if (schema !== '') {
      if (isJsonObjectText(schema)) values.jsonSchema = schema;
      else errors.jsonSchema = JSON_SCHEMA_PROBLEM;
    }
  }
  const parsed = ChatSampling.partial().safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path[0] as SamplingField | undefined;
      if (field && field in SAMPLING_LABELS && !errors[field]) errors[field] = bad(field);
    }
  }
  if (Object.keys(errors).length > 0 || !parsed.success) return { ok: false, errors };
  return { ok: true, sampling: parsed.data };
}

/** Every bad field named in one message, in the form's order. */
export function samplingProblem(errors: Partial<Record<CheckedField, string>>): string {
  const labels: Record<CheckedField, string> = { ...SAMPLING_LABELS, jsonSchema: 'JSON schema' };
  const fields = (Object.keys(labels) as CheckedField[]).filter((f) => errors[f]);
  if (fields.length === 0) return '';
  const names = fields.map((f) => labels[f]);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  return `Fix ${list} under Sampling: ${fields.map((f) => errors[f]).join(' ')}`;
}
