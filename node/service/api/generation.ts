// The generation concern: the reply being written and its events (a batch of rounds at a time).
import type { PowerApi } from '../../../contract/api/index.js';
import type { ChatReplies } from '../chat-replies.js';
import type { ServiceEvents } from '../events.js';
import { input } from './input.js';

export function generationApi(replies: ChatReplies, events: ServiceEvents): PowerApi['generation'] {
  return {
    active: async (raw) => (input('generation', 'active', raw), replies.active()),
    onRounds: events.rounds.on,
    onDone: events.done.on,
    onError: events.error.on,
  };
}
