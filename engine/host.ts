// The engine host: a child process that owns the native addon and every llama.cpp object.
// It answers EngineRequests over its channel to the main process (a forked child's IPC, or an
// Electron utility process's parentPort: host-channel.ts), validated against
// engine/protocol, and streams rounds and load progress as events. If llama.cpp aborts,
// only this process dies.
import type { z } from 'zod';

import {
  EngineRequest,
  engineMethods,
  type EngineEvent,
  type EngineMethod,
  type EngineMethods,
  type EngineResponse,
  type EngineResult,
} from './protocol.js';
import { loadBinding, type NativeModel, type NativeSession } from './binding.js';
import { addonDir, readBuildInfo } from './build-info.js';
import { probeCuda } from './cuda-probe.js';
import { connectToParent } from './host-channel.js';

type Handlers = {
  [M in EngineMethod]: (params: z.output<EngineMethods[M]['params']>) => Promise<EngineResult<M>> | EngineResult<M>;
};

const parent = connectToParent();
const flavour = process.env.POWER_ADDON_FLAVOUR ?? 'cpu';
const { binding, loadLog } = loadBinding(flavour);
const buildInfo = readBuildInfo(flavour);
// probed once: the loader's answers do not change while the process lives
const cuda =
  buildInfo.gpu === 'cuda'
    ? probeCuda({
        platform: process.platform,
        addonDir: addonDir(flavour),
        cudaMajor: buildInfo.cudaMajor ?? 13,
        devices: binding.devices(),
        loadLog,
        tryLoad: (lib) => binding.tryLoadLibrary(lib),
      })
    : null;
const models = new Map<string, NativeModel>();
const sessions = new Map<string, NativeSession>();
let nextId = 1;

function send(message: EngineResponse | EngineEvent): void {
  parent.send(message);
}

function model(id: string): NativeModel {
  const m = models.get(id);
  if (!m) throw new Error(`no model ${id} in the engine`);
  return m;
}

function session(id: string): NativeSession {
  const s = sessions.get(id);
  if (!s) throw new Error(`no session ${id} in the engine`);
  return s;
}

/** A failure inside llama.cpp (the addon's guard reports it as "llama.cpp failed: …") names what was asked. */
function withContext<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(message.startsWith('llama.cpp failed') ? `${what} (${message})` : message);
  }
}

function testHooksOn(): void {
  if (process.env.POWER_TEST_HOOKS !== '1') throw new Error('test hooks are off in this engine');
}

const handlers: Handlers = {
  hello: () => ({ llamaCppRelease: buildInfo.llamaCppRelease, flavour: buildInfo.flavour, devices: binding.devices(), cuda }),

  loadModel: async (p) => {
    const loaded = await binding.Model.load(p.path, {
      gpuLayers: p.gpuLayers,
      loadMtp: p.loadMtp,
      ...(p.devices ? { devices: p.devices } : {}),
      ...(p.requestId
        ? { onProgress: (progress: number) => send({ kind: 'event', event: 'progress', requestId: p.requestId!, progress }) }
        : {}),
    });
    const modelId = `m${nextId++}`;
    models.set(modelId, loaded);
    return { modelId, info: loaded.info() };
  },

  tokenize: (p) => withContext('the model\'s vocabulary cannot tokenize this text', () => model(p.modelId).tokenize(p.text, p.addSpecial, p.parseSpecial)),
  detokenize: (p) => withContext('the model\'s vocabulary cannot detokenize these tokens', () => model(p.modelId).detokenize(p.tokens, p.renderSpecial)),

  createSession: async (p) => {
    const created = await binding.Session.create(model(p.modelId), {
      contextSize: p.contextSize,
      batchSize: p.batchSize,
      threads: p.threads,
      ...(p.threadpoolPoll !== undefined ? { threadpoolPoll: p.threadpoolPoll } : {}),
      flashAttn: p.flashAttn,
      strategy: p.strategy,
      k: p.k,
      s: p.s,
      ...(p.draftModelId ? { draft: model(p.draftModelId) } : {}),
    });
    const sessionId = `s${nextId++}`;
    sessions.set(sessionId, created);
    const info = created.info();
    return { sessionId, contextSize: info.contextSize, threads: info.threads, k: info.k, s: info.s, recurrent: info.recurrent, flashAttn: info.flashAttn };
  },

  generate: (p) =>
    // the addon hands rounds over in coalesced batches (native/src/round_stream.h); they are
    // forwarded as they are, one IPC message per batch, and expanded by the receiver
    session(p.sessionId).generate(p.prompt, { maxTokens: p.maxTokens, ...p.sampling }, (batch) =>
      send({ kind: 'event', event: 'rounds', requestId: p.requestId, batch }),
    ),

  cancel: (p) => {
    session(p.sessionId).cancel();
    return null;
  },

  samplingOrderCheck: (p) => {
    testHooksOn();
    return model(p.modelId).samplingOrderCheckForTest(p.rows, p.proposals, p.sampling, p.extraDraws);
  },

  captureRow: (p) => {
    session(p.sessionId).captureRow(p.position, p.otherRow);
    return null;
  },

  capturedRow: (p) => session(p.sessionId).capturedRow(),

  perturbRow: (p) => {
    testHooksOn();
    session(p.sessionId).perturbRowForTest(p.position, p.hidden);
    return null;
  },

  injectFailure: (p) => {
    testHooksOn();
    session(p.sessionId).injectFailureForTest(p.round);
    return null;
  },

  disposeSession: async (p) => {
    await session(p.sessionId).dispose();
    sessions.delete(p.sessionId);
    return null;
  },

  disposeModel: async (p) => {
    await model(p.modelId).dispose();
    models.delete(p.modelId);
    return null;
  },

  liveHandles: () => binding.liveHandles(),
};

async function handle(raw: unknown): Promise<void> {
  const request = EngineRequest.safeParse(raw);
  if (!request.success) {
    // no id to answer to: a malformed message is a bug in the main process
    process.stderr.write(`engine host: malformed request: ${request.error.message}\n`);
    return;
  }
  const { id, method } = request.data;
  try {
    const params = engineMethods[method].params.parse(request.data.params);
    const handler = handlers[method] as (p: unknown) => unknown;
    const value = await handler(params);
    send({ kind: 'response', id, ok: true, value });
  } catch (error) {
    send({ kind: 'response', id, ok: false, error: error instanceof Error ? error.message : String(error) });
  }
}

parent.onMessage((message) => void handle(message));
// Ctrl-C belongs to the main process, which cancels the request or stops this host; a SIGINT
// that reaches the host anyway (a console on Windows, a kill of the whole group) is ignored
process.on('SIGINT', () => {});
// the main process went away: nothing left to serve
parent.onParentGone(() => process.exit(0));
