// The generation concern: the reply being written and its events (a batch of rounds at a time).
import type { ServiceImplementation } from '../types.js';
import type { ChatReplies } from '../chat-replies.js';
import type { ServiceEvents } from '../events.js';

export function generationApi(replies: ChatReplies, events: ServiceEvents): ServiceImplementation['generation'] {
  return {
    active: async () => replies.active(),
    onRounds: events.rounds.on,
    onDone: events.done.on,
    onError: events.error.on,
  };
}
