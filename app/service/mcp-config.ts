// mcp-servers.json in the data folder: the MCP servers the user configured. A versioned document
// of its own rather than a field of settings.json, so that a server list the schema refuses is set
// aside alone (the profiles stay) and a later format change migrates it alone.
import { join } from 'node:path';

import { PowerError } from '../contract/api/errors.js';
import type { McpServerConfig } from '../contract/api/mcp.js';
import { McpConfig } from '../mcp/config.js';
import { readDocumentOrSetAside, SaveQueue, writeDocument, type DocumentKind } from './storage/document.js';

export const MCP_CONFIG: DocumentKind<typeof McpConfig> = { format: 'mcp', version: 1, schema: McpConfig };

export const MCP_CONFIG_FILE = 'mcp-servers.json';

/** The configured servers on disk: read once, written after each change. */
export class McpConfigFile {
  private readonly saves = new SaveQueue();

  private constructor(
    private readonly file: string,
    public data: McpConfig,
  ) {}

  static async open(dataDir: string, log: (line: string) => void): Promise<McpConfigFile> {
    const file = join(dataDir, MCP_CONFIG_FILE);
    const data = await readDocumentOrSetAside(MCP_CONFIG, file, log);
    return new McpConfigFile(file, data ?? McpConfig.parse({}));
  }

  get(name: string): McpServerConfig {
    const server = this.data.servers.find((s) => s.name === name);
    if (!server) throw new PowerError('not-found', `no MCP server named "${name}"`);
    return server;
  }

  save(): Promise<void> {
    const snapshot = structuredClone(this.data);
    return this.saves.save(() => writeDocument(MCP_CONFIG, this.file, snapshot));
  }
}
