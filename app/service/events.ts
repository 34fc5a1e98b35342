// Typed event hubs: the service's onX members subscribe here; a listener that throws is
// reported, never allowed to break the reply that emitted the event.
import type { ApiError } from '../contract/api/errors.js';
import type { ReplyStats, RoundsEvent } from '../contract/api/generation.js';
import type { StopReason } from '../contract/engine-types.js';

export class Emitter<T> {
  private readonly listeners = new Set<(payload: T) => void>();

  on = (listener: (payload: T) => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  emit(payload: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(payload);
      } catch (error) {
        process.emitWarning(`a PowerApi listener threw: ${(error as Error).message}`);
      }
    }
  }
}

type Reply = { chatId: string; messageId: string };

/** The events of chats and their replies (the chats and generation concerns). */
export class ServiceEvents {
  readonly chatChanged = new Emitter<{ chatId: string; change: 'created' | 'updated' | 'deleted' }>();
  readonly rounds = new Emitter<RoundsEvent>();
  readonly done = new Emitter<Reply & { stopReason: StopReason; digest: string; stats: ReplyStats }>();
  readonly error = new Emitter<Reply & { error: ApiError }>();
}
