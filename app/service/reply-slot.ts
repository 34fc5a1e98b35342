// The engine's one reply slot: a chat reply, a completion of the OpenAI API or a model load
// holds it at a time. Chat replies and loads take it now or are refused `busy` (the user sees
// why); completions wait their turn in a FIFO queue. Stop is a state of the lease, not a flag
// someone polls: the request's cancel is attached when it enters the engine, and a stop that
// came earlier cancels it right there.
import { PowerError } from '../contract/api/errors.js';

/** Who holds the slot: a chat's reply (chatId, and its message once created), a completion or a load. */
export type SlotOwner = { kind: 'reply'; chatId: string; messageId: string | null } | { kind: 'completion' } | { kind: 'load' };

export interface SlotLease {
  readonly owner: SlotOwner;
  /** true once stop() was called */
  readonly stopRequested: boolean;
  /** the request is in the engine: `cancel` stops it (called at once when a stop came first) */
  attach(cancel: () => void): void;
  /** asks the holder to stop; resolves when it has released the slot */
  stop(): Promise<void>;
  release(): void;
}

interface Waiter {
  owner: SlotOwner;
  resolve: (lease: SlotLease) => void;
  reject: (error: Error) => void;
}

export class ReplySlot {
  private current: Lease | null = null;
  private readonly waiting: Waiter[] = [];
  private closed = false;

  /** How many completions wait their turn. */
  waitingCount(): number {
    return this.waiting.length;
  }

  /** The lease held now (null when the slot is free). */
  holder(): SlotLease | null {
    return this.current;
  }

  /** Takes the slot now, or refuses `busy` naming what holds it. */
  take(owner: SlotOwner): SlotLease {
    this.refuseWhenClosed();
    const held = this.current;
    if (held || this.waiting.length > 0) {
      const what =
        held?.owner.kind === 'reply'
          ? `a reply is streaming in chat ${held.owner.chatId}: stop it or wait for it to finish`
          : held?.owner.kind === 'load'
            ? 'a model is loading'
            : 'a completion of the OpenAI API is running';
      throw new PowerError('busy', what);
    }
    return (this.current = new Lease(owner, (l) => this.released(l)));
  }

  /** Waits for the slot (first come, first served); rejects `cancelled` if the signal aborts or the slot closes. */
  wait(owner: SlotOwner, signal?: AbortSignal): Promise<SlotLease> {
    this.refuseWhenClosed();
    if (!this.current && this.waiting.length === 0) return Promise.resolve(this.take(owner));
    return new Promise<SlotLease>((resolve, reject) => {
      const waiter: Waiter = { owner, resolve, reject };
      this.waiting.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(new PowerError('cancelled', 'the request was cancelled while it waited for the engine'));
        },
        { once: true },
      );
    });
  }

  /** Refuses every waiter and later claim, stops the holder and waits for it. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new PowerError('cancelled', 'Power is shutting down'));
    await this.current?.stop();
  }

  private refuseWhenClosed(): void {
    if (this.closed) throw new PowerError('cancelled', 'Power is shutting down');
  }

  private released(lease: Lease): void {
    if (this.current !== lease) return;
    this.current = null;
    const next = this.waiting.shift();
    if (next) next.resolve((this.current = new Lease(next.owner, (l) => this.released(l))));
  }
}

class Lease implements SlotLease {
  stopRequested = false;
  private cancel: (() => void) | null = null;
  private done = false;
  private readonly ended: Promise<void>;
  private markEnded: () => void = () => {};

  constructor(
    readonly owner: SlotOwner,
    private readonly onRelease: (lease: Lease) => void,
  ) {
    this.ended = new Promise<void>((resolve) => (this.markEnded = resolve));
  }

  attach(cancel: () => void): void {
    this.cancel = cancel;
    if (this.stopRequested) cancel();
  }

  stop(): Promise<void> {
    if (!this.done && !this.stopRequested) {
      this.stopRequested = true;
      this.cancel?.();
    }
    return this.ended;
  }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.cancel = null;
    this.onRelease(this);
    this.markEnded();
  }
}
