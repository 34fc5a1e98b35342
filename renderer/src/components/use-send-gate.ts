// The send gate as components read it (logic/send-gate.ts decides).
import { useShallow } from 'zustand/react/shallow';

import { checkSampling, samplingProblem } from '../logic/sampling.js';
import { sendBlocker } from '../logic/send-gate.js';
import { checkCustomForm } from '../store/profiles.js';
import { usePower } from './store-context.js';

/** Why a reply cannot start now (null: it can). */
export function useSendBlocker(): string | null {
  return usePower(
    useShallow((s) => {
      const sampling = checkSampling(s.sampling);
      return sendBlocker({
        connected: s.connected,
        engine: s.engine,
        loading: s.loadProgress?.running === true,
        streaming: s.streaming,
        chatId: s.chatId,
        streamingTitle: s.streaming ? (s.chats.find((c) => c.id === s.streaming!.chatId)?.title ?? null) : null,
        profileChoice: s.profileChoice,
        custom: checkCustomForm(s),
        activeProfile: s.profiles.find((p) => p.id === s.activeProfileId),
        samplingProblem: sampling.ok ? '' : samplingProblem(sampling.errors),
      });
    }),
  );
}
