// Token pieces are bytes, and a UTF-8 character may span several tokens. Each token's text is
// the whole characters it completes: bytes of an unfinished character wait for the token that
// finishes it (that token's text is '' meanwhile). Invalid bytes become U+FFFD, never dropped.
export class TokenText {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });

  /** The text this piece completes. */
  push(piece: Uint8Array): string {
    return this.decoder.decode(piece, { stream: true });
  }

  /** At the end of the reply: an unfinished character as U+FFFD ('' when there is none). */
  flush(): string {
    return this.decoder.decode();
  }
}
