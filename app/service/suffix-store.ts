// "Remember earlier replies for suffix drafting": the setting (settings.json), what the loaded
// model's store holds, and clearing it. The store itself is the engine's (one per model, in the
// engine host, kept in the data folder's suffix-store/<model id>.bin); the service reads its
// size through the supervisor and the file's size from the disk.
import { rm, stat } from 'node:fs/promises';

import type { SuffixStoreState } from '../contract/api/engine.js';
import type { EngineSupervisor } from './engine-supervisor.js';
import type { SettingsFile } from './settings.js';

async function fileBytes(file: string | null): Promise<number> {
  if (!file) return 0;
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

export class SuffixStoreSetting {
  constructor(
    private readonly supervisor: EngineSupervisor,
    private readonly settings: SettingsFile,
  ) {
    supervisor.setRememberReplies(settings.data.rememberReplies);
  }

  async state(): Promise<SuffixStoreState> {
    return this.read(false);
  }

  /**
   * Turns remembering on or off (saved, and followed by the next reply's session) and/or clears
   * the loaded model's store: in the engine when it holds it (memory and file, and the reply
   * in flight is not added after), else the file alone.
   */
  async set(p: { remember?: boolean | undefined; clear: boolean }): Promise<SuffixStoreState> {
    if (p.remember !== undefined && p.remember !== this.settings.data.rememberReplies) {
      this.settings.data.rememberReplies = p.remember;
      this.supervisor.setRememberReplies(p.remember);
      await this.settings.save();
    }
    return this.read(p.clear);
  }

  private async read(clear: boolean): Promise<SuffixStoreState> {
    const remember = this.settings.data.rememberReplies;
    const modelId = this.supervisor.loadedOptions()?.modelId ?? null;
    if (!modelId) return { remember, modelId, tokens: null, bytes: 0, problem: null };
    const file = this.supervisor.suffixStoreFile(modelId);
    const held = await this.supervisor.suffixStore(clear);
    // not in the engine yet: the file is what its first `suffix` session would read
    if (clear && !held && file) await rm(file, { force: true });
    return { remember, modelId, tokens: held?.tokens ?? null, bytes: await fileBytes(file), problem: held?.problem ?? null };
  }
}
