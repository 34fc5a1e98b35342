// settings.json: the active profile, the user's own profiles, the last load, whether `suffix`
// remembers earlier replies.
import { join } from 'node:path';

import { z } from 'zod';

import { LoadOptions } from '../contract/api/engine.js';
import { ProfileEntry } from '../contract/api/profiles.js';
import { readDocumentOrSetAside, SaveQueue, writeDocument, type DocumentKind } from './storage/document.js';

export const Settings = z.object({
  activeProfileId: z.string().default('balanced'),
  profiles: z.array(ProfileEntry).default([]),
  lastLoad: LoadOptions.nullable().default(null),
  /** `suffix` keeps each model's earlier replies to draft from (docs/app.md, "Remember earlier replies") */
  rememberReplies: z.boolean().default(true),
});
export type Settings = z.infer<typeof Settings>;

/** Version 1 called the last load's draft method `method`; version 2 says `draftMethod` (docs/architecture.md, Glossary). */
function draftMethodNamed(data: unknown): unknown {
  const settings = data as { lastLoad?: Record<string, unknown> | null };
  if (!settings.lastLoad || typeof settings.lastLoad !== 'object' || !('method' in settings.lastLoad)) return data;
  const { method, ...rest } = settings.lastLoad;
  return { ...settings, lastLoad: { ...rest, draftMethod: method } };
}

export const SETTINGS: DocumentKind<typeof Settings> = {
  format: 'settings',
  version: 2,
  schema: Settings,
  migrations: { 1: draftMethodNamed },
};

export class SettingsFile {
  private readonly saves = new SaveQueue();

  private constructor(
    private readonly file: string,
    public data: Settings,
  ) {}

  static async open(dataDir: string): Promise<SettingsFile> {
    const file = join(dataDir, 'settings.json');
    // a corrupt settings.json is set aside with a notice: Power starts with its defaults
    const data = await readDocumentOrSetAside(SETTINGS, file, (line) => void process.stderr.write(`power: ${line}\n`));
    return new SettingsFile(file, data ?? Settings.parse({}));
  }

  save(): Promise<void> {
    const snapshot = structuredClone(this.data);
    return this.saves.save(() => writeDocument(SETTINGS, this.file, snapshot));
  }
}
