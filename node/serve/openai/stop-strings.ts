// OpenAI `stop` sequences over streamed text: text is passed on as it comes except a tail that
// could still turn into a stop sequence, which is held back until it either completes one (the
// reply ends there, the sequence itself is not part of the reply) or cannot anymore.
export class StopStrings {
  private held = '';
  private done = false;

  constructor(private readonly stops: readonly string[]) {}

  get stopped(): boolean {
    return this.done;
  }

  /** Takes the next piece of text; returns what may be shown now. */
  push(text: string): string {
    if (this.done) return '';
    if (this.stops.length === 0) return text;
    const buffer = this.held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.done = true;
      this.held = '';
      return buffer.slice(0, cut);
    }
    const keep = this.partialTail(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return buffer.slice(0, buffer.length - keep);
  }

  /** The text held back at the end of the reply. */
  flush(): string {
    const rest = this.done ? '' : this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of a stop sequence. */
  private partialTail(buffer: string): number {
    let best = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, buffer.length); n > best; n--) {
        if (buffer.endsWith(stop.slice(0, n))) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
