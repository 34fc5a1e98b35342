// power serve: the service behind one HTTP port — the page, the whole PowerApi over /ws, the
// OpenAI-compatible API — until SIGINT, SIGTERM or SIGHUP. A thin front door: everything it serves is the
// service's; it only adds the transport and the token.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { powerApi } from '../contract/api/index.js';
import { ROOT } from '../paths.js';
import { servedPageApi } from '../serve/page-api.js';
import { startServer } from '../serve/server.js';
import { newToken } from '../serve/security.js';
import { serviceCompletions } from '../serve/openai/service-backend.js';
import { createPowerService, defaultDataDir } from '../service/index.js';
import { int, parseFlags, str } from './args.js';
import type { Io } from './generate.js';
import { UsageError } from './errors.js';

export const SERVE_USAGE = `power serve [--host 127.0.0.1] [--port N] [--data-dir DIR] [--models-dir DIR]... [--default-model FILE]
  [--token T] [--ui-dir DIR] [--verbose]
  Serves Power on one HTTP port: the app at /, the whole PowerApi over WebSocket at /ws, and the
  OpenAI-compatible API at /v1 (models, chat/completions, completions). Every request needs the
  token (random unless given). Prints one line, "Power is ready at http://HOST:PORT/?token=TOKEN",
  when it accepts requests; runs until Ctrl-C, SIGTERM or SIGHUP (the terminal closed). --default-model adds FILE to the library
  and loads it before that line unless the data folder's last load was another model.`;

export const DEFAULT_PORT = 7433;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'models-dir': { type: 'string', multiple: true },
  'default-model': { type: 'string' },
  token: { type: 'string' },
  'ui-dir': { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

export interface ServeIo extends Io {
  /** resolves when the process is asked to stop (SIGINT, SIGTERM, SIGHUP; SIGBREAK on Windows) */
  stopSignal: () => Promise<string>;
}

function builtRenderer(): string | null {
  const dir = join(ROOT, 'dist', 'renderer');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

export async function serveCommand(argv: string[], io: ServeIo): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const host = str(values, 'host') ?? '127.0.0.1';
  const port = int(values, 'port', { min: 0, max: 65535 }) ?? DEFAULT_PORT;
  const token = str(values, 'token') ?? newToken();
  if (!/^[\w.~-]{8,256}$/.test(token)) throw new UsageError('--token must be 8 to 256 URL-safe characters (letters, digits, - _ . ~)');
  const dataDir = resolve(str(values, 'data-dir') ?? defaultDataDir());
  const modelsDirs = ((values['models-dir'] as unknown as string[] | undefined) ?? []).map((d) => resolve(d));
  for (const dir of modelsDirs) if (!existsSync(dir)) throw new UsageError(`--models-dir ${dir} does not exist`);
  const defaultModel = str(values, 'default-model');
  if (defaultModel !== undefined && !existsSync(defaultModel)) throw new UsageError(`--default-model ${defaultModel} does not exist`);
  const uiDir = str(values, 'ui-dir');
  if (uiDir !== undefined && !existsSync(join(uiDir, 'index.html'))) throw new UsageError(`--ui-dir ${uiDir} has no index.html`);
  const log = (line: string): void => io.err(`power serve: ${line}\n`);

  const service = await createPowerService({
    dataDir,
    engine: { verbose: values.verbose === true },
    ...(defaultModel !== undefined ? { defaultModel: { path: resolve(defaultModel), log } } : {}),
  });
  let server;
  try {
    // a file that is not a usable model is skipped with its reason; it never stops the server
    for (const dir of modelsDirs) {
      const { added, skipped } = await service.models.add({ path: dir });
      log(
        `${dir}: ${added.length} model${added.length === 1 ? '' : 's'} added${added.length ? ` (${added.map((e) => e.name).join(', ')})` : ''}`,
      );
      for (const s of skipped) log(`skipped ${s.path}: ${s.reason}`);
    }
    server = await startServer({
      host,
      port,
      token,
      description: powerApi,
      // /ws checks every input itself: it serves the implementation, not the in-process API
      api: servedPageApi(service.implementation),
      completions: serviceCompletions(service),
      staticDir: uiDir ? resolve(uiDir) : builtRenderer(),
      log,
    });
  } catch (error) {
    await service.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new UsageError(`port ${port} on ${host} is in use (--port 0 picks a free one)`);
    if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL') throw new UsageError(`cannot listen on ${host}: no such local address`);
    throw error;
  }

  io.out(`Power is ready at ${server.origin}/?token=${token}\n`);
  const signal = await io.stopSignal();
  log(`${signal}: stopping (the reply in flight is stopped and saved)`);
  await service.close();
  await server.close();
  return 0;
}
