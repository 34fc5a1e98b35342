// The progress line of `power bench` on a terminal: task i of n, the profile running, its
// running median tok/s, and the time left estimated from the requests done so far.
export interface ProgressState {
  done: number;
  total: number;
  task: string;
  taskIndex: number;
  taskCount: number;
  profile: string;
  /** the running profile's median steady decode so far */
  tokensPerSecond: number | null;
  elapsedMs: number;
}

export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function progressLine(p: ProgressState, columns = 100): string {
  const eta = p.done > 0 ? clock((p.elapsedMs / p.done) * (p.total - p.done)) : '?';
  const width = 20;
  const filled = Math.round((p.done / Math.max(1, p.total)) * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const rate = p.tokensPerSecond === null ? '- tok/s' : `${p.tokensPerSecond.toFixed(1)} tok/s`;
  const line = `${bar} ${p.done}/${p.total} · task ${p.taskIndex}/${p.taskCount} ${p.task} · ${p.profile} · ${rate} · ETA ${eta}`;
  return line.length > columns - 1 ? line.slice(0, columns - 2) + '…' : line;
}

/** Rewrites one line on a TTY stream; does nothing elsewhere (logs and pipes stay clean). */
export class ProgressLine {
  private shown = false;
  constructor(private readonly stream: NodeJS.WriteStream | null) {}

  get active(): boolean {
    return this.stream?.isTTY === true;
  }

  update(p: ProgressState): void {
    if (!this.active) return;
    this.stream!.write(`\r\x1b[2K${progressLine(p, this.stream!.columns || 100)}`);
    this.shown = true;
  }

  clear(): void {
    if (this.active && this.shown) this.stream!.write('\r\x1b[2K');
    this.shown = false;
  }
}
