// The engine host: a child process that owns the native addon and every llama.cpp object.
// It serves engineApi (engine/protocol.ts) with serveChannel over its link to the main process
// (a forked child's IPC, or an Electron utility process's parentPort: host-channel.ts), and
// streams rounds and load progress as its events. It trusts its parent, which checks what goes
// in and what comes out (ENGINE_CHECKS). If llama.cpp aborts, only this process dies.
import { serveChannel, type ImplementationOf } from '../contract/channel/serve.js';
import { engineApi, ENGINE_CHECKS, type EngineApi, type RoundsEvent } from './protocol.js';
import { loadBinding, type NativeModel, type NativeSession } from './binding.js';
import { addonDir, readBuildInfo } from './build-info.js';
import { probeCuda } from './cuda-probe.js';
import { connectToParent } from './host-channel.js';

type Host = ImplementationOf<EngineApi>['engine'];

/** One event's listeners (the channel server holds one subscription per event). */
function emitter<T>() {
  const listeners = new Set<(payload: T) => void>();
  return {
    emit: (payload: T) => listeners.forEach((l) => l(payload)),
    on: (listener: (payload: T) => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

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
const rounds = emitter<RoundsEvent>();
const progress = emitter<{ requestId: string; progress: number }>();

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

const host: Host = {
  hello: () => ({ llamaCppRelease: buildInfo.llamaCppRelease, flavour: buildInfo.flavour, devices: binding.devices(), cuda }),

  loadModel: async (p) => {
    const loaded = await binding.Model.load(p.path, {
      gpuLayers: p.gpuLayers,
      loadMtp: p.loadMtp,
      ...(p.devices ? { devices: p.devices } : {}),
      ...(p.requestId
        ? { onProgress: (value: number) => progress.emit({ requestId: p.requestId!, progress: value }) }
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
    session(p.sessionId).generate(p.prompt, { maxTokens: p.maxTokens, ...p.sampling }, (batch) => rounds.emit({ requestId: p.requestId, batch })),

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

  onRounds: rounds.on,
  onProgress: progress.on,
};

serveChannel(engineApi, { engine: host }, parent, { checks: ENGINE_CHECKS });
// Ctrl-C belongs to the main process, which cancels the request or stops this host; a SIGINT
// that reaches the host anyway (a console on Windows, a kill of the whole group) is ignored
process.on('SIGINT', () => {});
// the main process went away: nothing left to serve
parent.onClose(() => process.exit(0));
