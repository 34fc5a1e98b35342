// The engine host: a child process that owns the native addon and every llama.cpp object.
// It serves engineApi (app/engine/protocol.ts) with serveChannel over its link to the main process
// (a forked child's IPC, or an Electron utility process's parentPort: host-channel.ts), and
// streams rounds and load progress as its events. It trusts its parent, which checks what goes
// in and what comes out (ENGINE_CHECKS). If llama.cpp aborts, only this process dies.
import { createServer, Socket, type AddressInfo } from 'node:net';

import { PowerError } from '../contract/api/errors.js';
import { strategyLabel } from '../contract/strategies.js';
import { serveChannel, type ImplementationOf } from '../contract/channel/serve.js';
import {
  engineApi,
  ENGINE_CHECKS,
  type ChatTemplateResult,
  type EngineApi,
  type ParsedChatReply,
  type RoundsEvent,
} from '../engine/protocol.js';
import { loadBinding, type NativeModel, type NativeSession } from './binding.js';
import { addonDir, readBuildInfo } from '../engine/build-info.js';
import { probeCuda } from './cuda-probe.js';
import { proposerSamplingPath, resolveSamplingPath, VULKAN_NO_BACKEND_SAMPLING, type SamplingPlace } from '../engine/sampling-path.js';
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
// the GPU backends that cannot sample in the graph for every model (app/engine/sampling-path.ts)
const noBackend = buildInfo.gpu === 'vulkan' ? VULKAN_NO_BACKEND_SAMPLING : null;
const models = new Map<string, NativeModel>();
const sessions = new Map<string, NativeSession>();
/** models whose output layer is on a GPU, and each session's model: where "auto" samples */
const modelOnGpu = new Map<string, boolean>();
const sessionPlace = new Map<string, SamplingPlace>();
let nextId = 1;
/** the holdReplies test hook: every request holds after this many rounds until cancelled (0: off) */
let holdAfterRound = 0;
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

/** Checks that host:port can be bound (port 0: picks a free one) and returns the port. */
function bindablePort(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is in use (--port 0 picks a free one)`
          : error.code === 'EADDRNOTAVAIL'
            ? `cannot listen on ${host}: no such local address`
            : `cannot listen on ${host}:${port}: ${error.message}`;
      reject(new PowerError('bad-input', why));
    });
    server.listen({ host, port, exclusive: true }, () => {
      const bound = (server.address() as AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/** Whether something accepts connections at host:port (one attempt). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect({ host, port });
  });
}

let serving: string | null = null;

/** Whether this flavour's llama.cpp has the RPC backend (an addon built before it had the entry point: no). */
function rpcAvailable(): boolean {
  return binding.rpcAvailable?.() ?? false;
}

/**
 * Starts llama.cpp's RPC server on its thread and waits until it accepts connections. It serves
 * until this process ends; should it stop (it only does when it cannot listen), the host exits.
 */
async function serveRpc(p: { host: string; port: number; devices: string[]; threads: number }) {
  if (serving) throw new PowerError('bad-input', `this engine already serves ${serving}`);
  if (!rpcAvailable())
    throw new PowerError('unsupported', `the ${flavour} flavour's llama.cpp has no RPC backend (the from-source builds have it)`);
  const port = await bindablePort(p.host, p.port);
  const endpoint = `${p.host}:${port}`;
  let stopped: Error | null = null;
  let announced = false;
  binding.rpcServe({ endpoint, devices: p.devices, threads: p.threads }).catch((error: unknown) => {
    stopped = error instanceof Error ? error : new Error(String(error));
    if (announced) {
      process.stderr.write(`${stopped.message}\n`);
      process.exit(1);
    }
  });
  const probeHost = p.host === '0.0.0.0' ? '127.0.0.1' : p.host;
  const deadline = Date.now() + 10_000;
  while (!(await accepts(probeHost, port))) {
    if (stopped) throw new PowerError('bad-input', (stopped as Error).message);
    if (Date.now() > deadline) throw new Error(`the RPC server at ${endpoint} did not start listening within 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  announced = true;
  serving = endpoint;
  const all = binding.devices();
  const served = p.devices.length > 0 ? all.filter((d) => p.devices.includes(d.name)) : defaultServed(all);
  return { endpoint, devices: served };
}

/** What llama.cpp's rpc-server serves without --device: every local GPU, else the CPU. */
function defaultServed(all: ReturnType<typeof binding.devices>) {
  const gpus = all.filter((d) => d.type !== 'cpu' && d.backend !== 'RPC');
  return gpus.length > 0 ? gpus : all.filter((d) => d.type === 'cpu');
}

/** whether a model loaded with these options has its output layer on a GPU (RPC machines are not counted) */
function outputOnGpu(gpuLayers: number, devices: readonly string[] | undefined): boolean {
  if (gpuLayers === 0) return false;
  const gpus = binding.devices().filter((d) => d.type !== 'cpu' && d.backend !== 'RPC');
  // [] keeps everything on the CPU; absent: llama.cpp places the output on the first GPU
  return devices ? devices.some((name) => gpus.some((g) => g.name === name)) : gpus.length > 0;
}

function testHooksOn(): void {
  if (process.env.POWER_TEST_HOOKS !== '1') throw new Error('test hooks are off in this engine');
}

const host: Host = {
  hello: () => ({
    llamaCppRelease: buildInfo.llamaCppRelease,
    flavour: buildInfo.flavour,
    devices: binding.devices(),
    cuda,
    rpc: rpcAvailable(),
  }),

  addRpcServers: async (p) => {
    if (!rpcAvailable()) {
      throw new PowerError(
        'unsupported',
        `the ${flavour} flavour's llama.cpp has no RPC backend (the from-source builds have it: npm run build:native -- --flavour cpu)`,
      );
    }
    const out = [];
    // one after another: the devices are numbered RPC0, RPC1, ... in this order
    for (const endpoint of p.endpoints) out.push({ endpoint, devices: await binding.addRpcServer(endpoint) });
    return out;
  },

  rpcServe: (p) => serveRpc(p),

  quantize: (p) => binding.quantize(p),

  loadModel: async (p) => {
    const loaded = await binding.Model.load(p.path, {
      gpuLayers: p.gpuLayers,
      loadMtp: p.loadMtp,
      ...(p.devices ? { devices: p.devices } : {}),
      ...(p.splitMode ? { splitMode: p.splitMode } : {}),
      ...(p.mainGpu !== undefined ? { mainGpu: p.mainGpu } : {}),
      ...(p.tensorSplit ? { tensorSplit: p.tensorSplit } : {}),
      ...(p.cpuMoe ? { cpuMoe: true } : {}),
      ...(p.nCpuMoe ? { nCpuMoe: p.nCpuMoe } : {}),
      ...(p.requestId ? { onProgress: (value: number) => progress.emit({ requestId: p.requestId!, progress: value }) } : {}),
    });
    const modelId = `m${nextId++}`;
    models.set(modelId, loaded);
    modelOnGpu.set(modelId, outputOnGpu(p.gpuLayers, p.devices));
    return { modelId, info: loaded.info() };
  },

  tokenize: (p) =>
    withContext("the model's vocabulary cannot tokenize this text", () => model(p.modelId).tokenize(p.text, p.addSpecial, p.parseSpecial)),
  detokenize: (p) =>
    withContext("the model's vocabulary cannot detokenize these tokens", () => model(p.modelId).detokenize(p.tokens, p.renderSpecial)),

  applyChat: (p) =>
    withContext(
      "the model's chat template cannot render this request",
      () =>
        JSON.parse(
          model(p.modelId).applyChat(
            JSON.stringify({
              messages: p.messages,
              tools: p.tools,
              toolChoice: p.toolChoice,
              ...(p.parallelToolCalls !== undefined ? { parallelToolCalls: p.parallelToolCalls } : {}),
              ...(p.enableThinking !== undefined ? { enableThinking: p.enableThinking } : {}),
              ...(p.chatTemplateKwargs !== undefined ? { chatTemplateKwargs: p.chatTemplateKwargs } : {}),
              ...(p.reasoningFormat !== undefined ? { reasoningFormat: p.reasoningFormat } : {}),
            }),
          ),
        ) as ChatTemplateResult,
    ),
  parseChat: (p) =>
    withContext(
      'the reply cannot be read for tool calls',
      () =>
        JSON.parse(
          model(p.modelId).parseChat(
            JSON.stringify({
              format: p.format,
              parser: p.parser,
              generationPrompt: p.generationPrompt,
              preservedTokens: p.preservedTokens,
              stops: p.stops,
              partial: p.partial,
              ...(p.reasoningFormat !== undefined ? { reasoningFormat: p.reasoningFormat } : {}),
            }),
            p.tokens,
          ),
        ) as ParsedChatReply,
    ),

  createSession: async (p) => {
    const onGpu = modelOnGpu.get(p.modelId) ?? false;
    const created = await binding.Session.create(model(p.modelId), {
      proposerSampling: proposerSamplingPath(p.proposerSampling, onGpu, noBackend),
      contextSize: p.contextSize,
      batchSize: p.batchSize,
      threads: p.threads,
      ...(p.threadpoolPoll !== undefined ? { threadpoolPoll: p.threadpoolPoll } : {}),
      flashAttn: p.flashAttn,
      // the addon takes a chain as llama.cpp writes it: "ngram,mtp"
      strategy: strategyLabel(p.strategy, p.fallbacks),
      pMin: p.pMin,
      adaptiveK: p.adaptiveK,
      k: p.k,
      s: p.s,
      ...(p.frVocab !== undefined ? { frVocab: p.frVocab } : {}),
      ...(p.draftModelId ? { draft: model(p.draftModelId) } : {}),
      ...(p.projector ? { projector: p.projector } : {}),
      ...(p.suffixStoreTokens !== undefined ? { suffixStoreTokens: p.suffixStoreTokens } : {}),
      ...(p.suffixStoreFile ? { suffixStoreFile: p.suffixStoreFile } : {}),
    });
    const sessionId = `s${nextId++}`;
    sessions.set(sessionId, created);
    sessionPlace.set(sessionId, { onGpu, k: created.info().k, noBackend });
    const info = created.info();
    return {
      sessionId,
      contextSize: info.contextSize,
      threads: info.threads,
      k: info.k,
      s: info.s,
      recurrent: info.recurrent,
      flashAttn: info.flashAttn,
    };
  },

  generate: async (p) => {
    const native = session(p.sessionId);
    const place = sessionPlace.get(p.sessionId) ?? { onGpu: false, k: 0 };
    const resolved = resolveSamplingPath(p.sampling.path, p.sampling, place);
    if (resolved.problem !== undefined) throw new PowerError('bad-input', resolved.problem);
    if (process.env.POWER_TEST_HOOKS === '1') native.holdForTest(holdAfterRound);
    // the addon hands rounds over in coalesced batches (native/src/round_stream.h); they are
    // forwarded as they are, one IPC message per batch, and expanded by the receiver
    const result = await native.generate(p.media ?? p.prompt, { maxTokens: p.maxTokens, ...p.sampling, path: resolved.path }, (batch) =>
      rounds.emit({ requestId: p.requestId, batch }),
    );
    return { ...result, sampling: { path: resolved.path, reason: resolved.reason } };
  },

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

  trap: () => {
    testHooksOn();
    return binding.trapForTest();
  },

  holdReplies: (p) => {
    testHooksOn();
    holdAfterRound = p.afterRound ?? 0;
    return null;
  },

  memoryCells: (p) => session(p.sessionId).memoryCells(),
  suffixStore: (p) => {
    const store = session(p.sessionId).suffixStore(p.clear);
    return { tokens: store?.tokens ?? null, problem: store?.problem ?? null };
  },

  disposeSession: async (p) => {
    await session(p.sessionId).dispose();
    sessions.delete(p.sessionId);
    sessionPlace.delete(p.sessionId);
    return null;
  },

  disposeModel: async (p) => {
    await model(p.modelId).dispose();
    models.delete(p.modelId);
    modelOnGpu.delete(p.modelId);
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
