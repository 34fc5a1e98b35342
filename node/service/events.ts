// A typed event hub: the service's onX members subscribe here; a listener that throws is
// reported, never allowed to break the reply that emitted the event.
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
