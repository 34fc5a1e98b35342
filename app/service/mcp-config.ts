// mcp-servers.json in the data folder: the MCP servers the user configured. A versioned document
// of its own rather than a field of settings.json, so that a server list the schema refuses is set
// aside alone (the profiles stay) and a later format change migrates it alone. Another process
// on the same data folder (`power mcp`, the app beside `power serve`) may write it too: a running
// service watches the file and takes a change it did not make (watch()).
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { PowerError } from '../contract/api/errors.js';
import type { McpServerConfig } from '../contract/api/mcp.js';
import { McpConfig } from '../mcp/config.js';
import { decodeDocument, encodeDocument, readDocumentOrSetAside, SaveQueue, writeDocument, type DocumentKind } from './storage/document.js';

export const MCP_CONFIG: DocumentKind<typeof McpConfig> = { format: 'mcp', version: 1, schema: McpConfig };

export const MCP_CONFIG_FILE = 'mcp-servers.json';

/** The configured servers on disk: read once, written after each change, read again when another process changes it. */
export class McpConfigFile {
  private readonly saves = new SaveQueue();
  /** saves of this process not yet on disk: the file is not read back meanwhile */
  private writing = 0;
  private watcher: FSWatcher | null = null;
  private onExternal: (() => void) | null = null;
  private rereading: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    public data: McpConfig,
    private readonly log: (line: string) => void,
  ) {}

  static async open(dataDir: string, log: (line: string) => void): Promise<McpConfigFile> {
    const file = join(dataDir, MCP_CONFIG_FILE);
    const data = await readDocumentOrSetAside(MCP_CONFIG, file, log);
    return new McpConfigFile(file, data ?? McpConfig.parse({}), log);
  }

  /**
   * Watches the file for writes of other processes: a list that differs from the one held here
   * replaces it and `changed` is told. A file that does not read as a server list (a hand edit
   * half done, a newer Power's) is said in the log and the list held stays; a deleted file is an
   * empty list.
   */
  watch(changed: () => void): void {
    this.onExternal = changed;
    const dir = join(this.file, '..');
    const name = MCP_CONFIG_FILE;
    try {
      // the folder, not the file: a save replaces the file (a new inode) by renaming over it
      this.watcher = watch(dir, { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name) this.reread();
      });
      this.watcher.on('error', (error) => this.log(`${this.file}: no longer watched for changes of other processes (${error.message})`));
    } catch (error) {
      this.log(`${this.file}: changes of other processes are not seen until restart (${(error as Error).message})`);
    }
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
    this.onExternal = null;
  }

  private reread(): void {
    this.rereading = this.rereading
      .then(() => this.takeExternal())
      .catch((error: unknown) => this.log(`${this.file}: ${(error as Error).message}`));
  }

  private async takeExternal(): Promise<void> {
    if (this.writing > 0 || !this.onExternal) return;
    let text: string | null;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      text = null;
    }
    // a save of this process began while the file was read: that save is the newer list
    if (this.writing > 0 || !this.onExternal) return;
    let data: McpConfig;
    try {
      data = text === null ? McpConfig.parse({}) : decodeDocument(MCP_CONFIG, text, this.file);
    } catch (error) {
      this.log(`${(error as Error).message}; the MCP servers stay as they were`);
      return;
    }
    if (encodeDocument(MCP_CONFIG, data) === encodeDocument(MCP_CONFIG, this.data)) return;
    this.data = data;
    this.onExternal();
  }

  get(name: string): McpServerConfig {
    const server = this.data.servers.find((s) => s.name === name);
    if (!server) throw new PowerError('not-found', `no MCP server named "${name}"`);
    return server;
  }

  save(): Promise<void> {
    const snapshot = structuredClone(this.data);
    this.writing++;
    return this.saves
      .save(() => writeDocument(MCP_CONFIG, this.file, snapshot))
      .finally(() => {
        // a change another process made while this one wrote is taken now
        if (--this.writing === 0 && this.watcher) this.reread();
      });
  }
}
