// Stop strings over streamed text: the reply ends where one of them first appears, and that
// string is not part of the reply. They are the /v1 request's `stop` sequences and, for a model
// without a chat template, the end-of-turn marker of the ChatML fallback when the model has no
// token for it (app/service/conversation.ts). Text is passed on as it comes, except a tail that
// could still become a stop string: it is held back until it either completes one (it is dropped)
// or cannot anymore (it is released). runRequest (request.ts) runs every token's text through
// one of these.
export class StopStrings {
  private held = '';
  private matched: string | null = null;

  constructor(private readonly stops: readonly string[]) {}

  /** whether a stop string has been reached */
  get stopped(): boolean {
    return this.matched !== null;
  }

  /** the stop string that ended the text, null while none has */
  get stop(): string | null {
    return this.matched;
  }

  /** Takes the next piece of text; returns what may be shown now ('' once stopped). */
  push(text: string): string {
    if (this.matched !== null) return '';
    if (this.stops.length === 0) return text;
    const buffer = this.held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.matched = stop;
      }
    }
    if (cut >= 0) {
      this.held = '';
      return buffer.slice(0, cut);
    }
    const keep = this.partialTail(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return buffer.slice(0, buffer.length - keep);
  }

  /** The text held back at the end of the reply ('' once stopped). */
  flush(): string {
    const rest = this.matched !== null ? '' : this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of a stop string. */
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
