// Whether a message can be sent now, and if not why, in words next to Send; and the profile that
// will run it. Checked before anything is sent: a reply never runs on a profile the picker does
// not show, nor before a model is loaded.
import type { EngineState, ProfileEntry } from '../api-types.js';
import { chainLabel, draftingParts } from './chain.js';
import { customProblems, type CustomCheck } from './custom-profile.js';

export interface SendState {
  connected: boolean;
  engine: EngineState | null;
  loading: boolean;
  /** the reply being written, anywhere */
  streaming: { chatId: string } | null;
  /** the open chat (null: a new one is created) */
  chatId: string | null;
  /** the title of the chat whose reply streams */
  streamingTitle: string | null;
  /** what the Profile picker shows: a profile id or 'custom' */
  profileChoice: string | null;
  custom: CustomCheck;
  activeProfile: ProfileEntry | undefined;
  /** the sampling form's one message, '' when fine */
  samplingProblem: string;
}

/** Whether `profile` is the Custom profile the form describes: of the loaded strategy (or chain), with K, S, p-min, adaptive K and FR alike. */
export function customApplied(custom: CustomCheck, profile: ProfileEntry | undefined): boolean {
  if (!custom.ok || profile === undefined || profile.preset) return false;
  return (
    profile.strategy === null &&
    profile.k === custom.k &&
    profile.s === custom.s &&
    profile.pMin === custom.pMin &&
    (profile.adaptiveK ?? false) === (custom.adaptiveK ?? false) &&
    profile.frVocab === custom.frVocab
  );
}

/** Why Send (and Regenerate, Edit) cannot run a reply now; null when it can. */
export function sendBlocker(s: SendState): string | null {
  if (!s.connected) return 'Not connected to Power.';
  if (s.loading || s.engine?.status === 'loading') return 'Wait: the model is loading.';
  if (!s.engine?.model) return 'Load a model first: pick one under Model, then press Load.';
  if (s.streaming) {
    if (s.streaming.chatId === s.chatId) return 'Writing the reply… (Stop or Escape ends it)';
    return `A reply is being written in “${s.streamingTitle ?? 'another chat'}”: wait for it, or open that chat to stop it.`;
  }
  if (s.profileChoice === 'custom') {
    if (!s.custom.ok) return `The Custom profile is not valid: ${customProblems(s.custom)} Fix it or pick another profile.`;
    if (!customApplied(s.custom, s.activeProfile)) return 'Apply the Custom profile first (or pick another profile).';
  }
  if (s.samplingProblem) return s.samplingProblem;
  return null;
}

/** "K7/S6 · p-min 0.3 · adaptive K · FR 4096 · ngram-mod → mtp": what a profile sets. */
export function profileSettings(p: ProfileEntry): string {
  if (p.k === null) return 'no proposals';
  const parts = [`K${p.k}${p.s === null ? '' : `/S${p.s}`}`, ...draftingParts(p)];
  if (p.strategy !== null) parts.push(chainLabel(p.strategy, p.fallbacks));
  return parts.join(' · ');
}

/** "Peak K7/S6 (guarded)": the profile the next reply runs on. */
export function profileToRun(active: ProfileEntry | undefined): string {
  if (!active) return '—';
  if (active.preset) return active.name;
  const settings = profileSettings(active);
  return active.name.includes(settings) ? active.name : `${active.name} (${settings})`;
}
