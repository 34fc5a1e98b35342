// The model library: entries pointing at the user's GGUF files (library.json in the data
// folder). Adding reads the header (the `power info` facts) and hashes the file in the
// background; removing forgets the entry and never touches the file.
import { randomUUID } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

import { z } from 'zod';

import { PowerError } from '../contract/api/errors.js';
import { ModelEntry } from '../contract/api/models.js';
import { readBuildInfo } from '../engine/build-info.js';
import { readGgufInfo } from '../gguf/reader.js';
import type { GgufInfo } from '../gguf/types.js';
import { checkModelFile, ModelFileError } from '../models/check-file.js';
import { modelFacts } from '../models/facts.js';
import { projectorFor } from '../models/projector.js';
import { Emitter } from './events.js';
import { sha256File } from './sha256.js';
import { readDocumentOrSetAside, SaveQueue, writeDocument, type DocumentKind } from './storage/document.js';

const LIBRARY: DocumentKind<z.ZodArray<typeof ModelEntry>> = { format: 'library', version: 1, schema: z.array(ModelEntry) };

export class ModelLibrary {
  readonly changed = new Emitter<{ entries: ModelEntry[] }>();
  private entries: ModelEntry[] = [];
  private readonly saves = new SaveQueue();
  private readonly hashing = new Map<string, Promise<void>>();
  private closed = false;

  private constructor(private readonly file: string) {}

  static async open(dataDir: string): Promise<ModelLibrary> {
    const library = new ModelLibrary(join(dataDir, 'library.json'));
    // a corrupt library.json is set aside with a notice: the library starts empty (the files stay)
    library.entries = (await readDocumentOrSetAside(LIBRARY, library.file, (line) => void process.stderr.write(`power: ${line}\n`))) ?? [];
    // re-check every entry: files move, change, or were being hashed when Power stopped
    for (const entry of library.entries) await library.refresh(entry);
    return library;
  }

  list(): ModelEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }

  get(id: string): ModelEntry {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) throw new PowerError('not-found', `no model ${id} in the library`);
    return { ...entry };
  }

  /**
   * The projector paired with a model (the mmproj-*.gguf beside it), which a prompt with images
   * needs; `unsupported` with the reason when it has none or the one beside it does not fit.
   */
  projectorPath(id: string): string {
    const model = this.get(id);
    const pairing = model.projector;
    if (!pairing) {
      throw new PowerError(
        'unsupported',
        `${model.name} reads text only: images need its projector (an mmproj-*.gguf beside the model file, as llama.cpp's releases name it)`,
      );
    }
    if (!pairing.compatible)
      throw new PowerError('unsupported', `${model.name}: its projector ${pairing.path} does not fit: ${pairing.reason}`);
    return pairing.path;
  }

  /** The header of the entry's paired projector, when it fits the model (null: none, or it does not fit). */
  async projector(id: string): Promise<GgufInfo | null> {
    const pairing = this.get(id).projector;
    if (!pairing?.compatible) return null;
    try {
      return await readGgufInfo(pairing.path);
    } catch (error) {
      throw new PowerError('bad-input', `${this.get(id).name}: its projector ${pairing.path}: ${(error as Error).message}`);
    }
  }

  /** The entry's file, checked now: it must still be a usable GGUF. */
  async gguf(id: string): Promise<GgufInfo> {
    const entry = this.get(id);
    try {
      return await checkModelFile(entry.path, readBuildInfo().architectures);
    } catch (error) {
      if (error instanceof ModelFileError) throw new PowerError('bad-input', `${entry.name}: ${error.message}`);
      throw error;
    }
  }

  async add(path: string): Promise<{ added: ModelEntry[]; skipped: Array<{ path: string; reason: string }> }> {
    const full = resolve(path);
    let st;
    try {
      st = await stat(full);
    } catch {
      throw new PowerError('not-found', `no such file or folder: ${full}`);
    }
    const files = st.isDirectory()
      ? (await readdir(full))
          .filter((f) => f.toLowerCase().endsWith('.gguf'))
          .sort()
          .map((f) => join(full, f))
      : [full];
    const added: ModelEntry[] = [];
    const skipped: Array<{ path: string; reason: string }> = [];
    for (const file of files) {
      if (this.entries.some((e) => e.path === file)) {
        skipped.push({ path: file, reason: 'already in the library' });
        continue;
      }
      try {
        const info = await checkModelFile(file, readBuildInfo().architectures);
        const fst = await stat(file);
        const entry: ModelEntry = {
          id: randomUUID(),
          name: this.uniqueName(basename(file).replace(/\.gguf$/i, '')),
          path: file,
          sizeBytes: fst.size,
          addedAt: new Date().toISOString(),
          sha256: { state: 'pending' },
          facts: modelFacts(info),
          projector: await projectorFor(file, info),
          problem: null,
        };
        this.entries.push(entry);
        added.push({ ...entry });
      } catch (error) {
        if (!(error instanceof ModelFileError)) throw error;
        skipped.push({ path: file, reason: error.message });
      }
    }
    if (!st.isDirectory() && added.length === 0) {
      throw new PowerError('bad-input', `${full}: ${skipped[0]?.reason ?? 'not added'}`);
    }
    if (added.length > 0) {
      await this.save();
      for (const e of added) this.hashInBackground(e.id);
    }
    return { added, skipped };
  }

  async remove(id: string): Promise<void> {
    this.get(id);
    this.entries = this.entries.filter((e) => e.id !== id);
    await this.save();
  }

  /** Resolves when every background hash has finished (tests, close). */
  async settled(): Promise<void> {
    while (this.hashing.size > 0) await Promise.allSettled([...this.hashing.values()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  private uniqueName(base: string): string {
    let name = base;
    for (let i = 2; this.entries.some((e) => e.name === name); i++) name = `${base}-${i}`;
    return name;
  }

  private async refresh(entry: ModelEntry): Promise<void> {
    let st;
    try {
      st = await stat(entry.path);
    } catch {
      entry.problem = `the file is gone: ${entry.path}`;
      return;
    }
    entry.problem = null;
    const hash = entry.sha256;
    const changed = hash.state !== 'done' || hash.ofSize !== st.size || hash.ofMtimeMs !== st.mtimeMs;
    try {
      const info = await readGgufInfo(entry.path);
      if (changed) entry.facts = modelFacts(info);
      // projectors come and go beside the model whether or not it changed
      entry.projector = await projectorFor(entry.path, info);
    } catch (error) {
      entry.problem = (error as Error).message;
    }
    if (changed) {
      entry.sizeBytes = st.size;
      entry.sha256 = { state: 'pending' };
      this.hashInBackground(entry.id);
    }
  }

  private hashInBackground(id: string): void {
    if (this.hashing.has(id)) return;
    const job = (async () => {
      const entry = this.entries.find((e) => e.id === id);
      if (!entry) return;
      try {
        const before = await stat(entry.path);
        const hex = await sha256File(entry.path);
        entry.sha256 = { state: 'done', hex, ofSize: before.size, ofMtimeMs: before.mtimeMs };
      } catch (error) {
        entry.sha256 = { state: 'error', message: (error as Error).message };
      }
      if (this.closed && !this.entries.includes(entry)) return;
      await this.save();
    })().finally(() => this.hashing.delete(id));
    this.hashing.set(id, job);
  }

  private async save(): Promise<void> {
    const snapshot = this.list();
    await this.saves.save(() => writeDocument(LIBRARY, this.file, snapshot));
    this.changed.emit({ entries: this.list() });
  }
}
