// Streaming tokens can arrive at several hundred per second; the DOM is updated at most once
// per animation frame with everything that arrived since the last one.

export type Scheduler = (callback: () => void) => unknown;

export interface FrameBatcher<T> {
  push(item: T): void;
  /** delivers what is pending now (before a reply's last stats, say) */
  flush(): void;
}

const nextFrame: Scheduler = (callback) =>
  typeof requestAnimationFrame === 'function' ? requestAnimationFrame(() => callback()) : setTimeout(callback, 16);

export function createFrameBatcher<T>(deliver: (items: T[]) => void, schedule: Scheduler = nextFrame): FrameBatcher<T> {
  let pending: T[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const items = pending;
    pending = [];
    deliver(items);
  };
  return {
    push(item) {
      pending.push(item);
      if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
    },
    flush,
  };
}
