// Loads the native addon. Only the engine host process imports this file (docs/architecture.md
// "Layering"): a llama.cpp abort then takes down the host, never the app or the CLI.
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { DeviceInfo, NativeGenerateResult } from '../contract/engine-types.js';
import type { NativeModelInfo, RoundBatch, Tokens } from '../engine/protocol.js';

export { MEDIA_MARKER } from '../engine/protocol.js';
import { addonDir } from '../engine/build-info.js';

export interface NativeModel {
  info(): NativeModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Tokens;
  detokenize(tokens: Int32Array, renderSpecial: boolean): string;
  /** JSON in, JSON out (native/src/model_chat.cpp) */
  applyChat(requestJson: string): string;
  parseChat(optionsJson: string, tokens: Int32Array): string;
  samplingOrderCheckForTest(
    rows: Float32Array,
    proposals: Int32Array,
    sampling: object,
    extraDraws: number,
  ): { spec: number[]; accepted: number; eog: boolean; ar: number[]; probeSpec: number; probeAr: number };
  dispose(): Promise<void>;
  readonly disposed: boolean;
}

/** what a request sampled at the captured position (native/src/session_capture.cpp) */
export interface CapturedRow {
  row: Float32Array<ArrayBuffer>;
  rowToken: number;
  otherToken: number | null;
  /** drawn on the backend: no row of logits */
  backend: boolean;
  /** the candidates a CPU draw accumulated over, in its order, with their probabilities (seeded) */
  drawnFromIds: Int32Array<ArrayBuffer>;
  drawnFromP: Float64Array<ArrayBuffer>;
}

export interface NativeSession {
  /** a prompt with images (a session with a projector): the text holds one MEDIA_MARKER per image */
  generate(prompt: Int32Array | NativeMediaPrompt, options: object, onRounds: (batch: RoundBatch) => void): Promise<NativeGenerateResult>;
  cancel(): void;
  dispose(): Promise<void>;
  info(): {
    contextSize: number;
    batchSize: number;
    threads: number;
    threadpool: boolean;
    committedTokens: number;
    strategy: string;
    k: number;
    s: number | null;
    recurrent: boolean;
    flashAttn: 'on' | 'off' | 'unknown';
  };
  injectFailureForTest(round: number): void;
  /** the next request holds after that many rounds until cancelled (0: off) */
  holdForTest(round: number): void;
  captureRow(position: number, otherRow?: Float32Array): void;
  capturedRow(): CapturedRow | null;
  perturbRowForTest(position: number, hidden: boolean): void;
  /** the target's KV cache (native/src/session_memory.cpp); refused while a request runs */
  memoryCells(): NativeMemoryCells;
  /** the tokens the model's store of earlier replies holds (`suffix`; null: none), emptied first with `clear` */
  suffixStore(clear: boolean): { tokens: number; problem: string | null } | null;
}

/** a prompt with images for a session opened with a projector: the images' encoded files (PNG, JPEG, ...) */
export interface NativeMediaPrompt {
  text: string;
  images: Uint8Array[];
  /** a BOS first where the model wants one (default true); special tokens are always parsed */
  addSpecial?: boolean;
}

/** one KV cache of the target: its cells, the cells in use, sequence 0's positions (-1: none) */
export interface NativeCacheCells {
  size: number;
  used: number;
  posMin: number;
  posMax: number;
}

export interface NativeMemoryCells {
  /** iswa: a full-attention and a sliding-window cache; kv: one attention cache; other: recurrent/hybrid */
  kind: 'iswa' | 'kv' | 'other';
  /** llama_memory_seq_pos_min/_max of sequence 0 (on iswa: the sliding-window cache's) */
  posMin: number;
  posMax: number;
  base: NativeCacheCells | null;
  swa: NativeCacheCells | null;
}

export interface NativeBinding {
  /** loads the backends next to the addon; loadLog: what ggml warned about meanwhile */
  init(libDir: string): { loadLog: string };
  devices(): DeviceInfo[];
  /** null when the library loads, else the system loader's message */
  tryLoadLibrary(pathOrName: string): string | null;
  /** projectors: the multimodal projector contexts, one per model and settings, shared by its sessions */
  liveHandles(): { models: number; contexts: number; jobs: number; projectors: number };
  /** executes an illegal instruction: the host dies of it (test hook) */
  trapForTest(): never;
  /** whether this flavour's llama.cpp has the RPC backend (absent: an addon built before the entry point existed) */
  rpcAvailable?: () => boolean;
  /** registers the devices of the RPC server at host:port (RPC0, RPC1, ...) and returns them */
  addRpcServer(endpoint: string): Promise<DeviceInfo[]>;
  /** serves these devices at host:port; settles (rejected) only when the server stops */
  rpcServe(options: { endpoint: string; devices: string[]; threads: number }): Promise<never>;
  /** llama_model_quantize (native/src/quantize.h) */
  quantize(options: {
    input: string;
    output: string;
    ftype: number;
    pure: boolean;
    overrides: { pattern: string; type: string }[];
    threads: number;
  }): Promise<null>;
  Model: {
    load(
      path: string,
      options: {
        gpuLayers?: number;
        loadMtp?: boolean;
        devices?: string[];
        splitMode?: string;
        mainGpu?: number;
        tensorSplit?: number[];
        cpuMoe?: boolean;
        nCpuMoe?: number;
        onProgress?: (p: number) => void;
      },
    ): Promise<NativeModel>;
  };
  Session: {
    create(
      model: NativeModel,
      options: {
        contextSize?: number;
        batchSize?: number;
        threads?: number;
        threadpoolPoll?: number;
        flashAttn?: string;
        strategy?: string;
        pMin?: number;
        adaptiveK?: boolean;
        k?: number;
        s?: number;
        draft?: NativeModel;
        proposerSampling?: 'cpu' | 'backend';
        frVocab?: number;
        /** the model's mmproj-*.gguf: the session's prompts may hold images */
        projector?: string;
        /** `suffix`: the model's store of earlier replies, in tokens (0: off for this session) */
        suffixStoreTokens?: number;
        /** its file, read when the model's store is made and kept from then on */
        suffixStoreFile?: string;
      },
    ): Promise<NativeSession>;
  };
}

let loaded: { binding: NativeBinding; loadLog: string } | undefined;

/** Loads one flavour's addon (a process holds at most one: their llama.cpp symbols clash). */
export function loadBinding(flavour = 'cpu'): { binding: NativeBinding; loadLog: string } {
  if (loaded) return loaded;
  const dir = addonDir(flavour);
  const require = createRequire(import.meta.url);
  const binding = require(join(dir, 'power.node')) as NativeBinding;
  const { loadLog } = binding.init(dir);
  loaded = { binding, loadLog };
  return loaded;
}
