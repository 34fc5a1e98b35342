// The load settings as typed (Context size, Threads, GPU layers, Remote machines), checked before engine.load.
export interface LoadFields {
  contextSize: string;
  threads: string;
  gpuLayers: string;
  /** `power rpc` servers whose devices join the split: host:port, separated by commas or spaces */
  remote: string;
}

export type LoadFieldsCheck =
  | { ok: true; contextSize: number | undefined; threads: number | undefined; gpuLayers: number; rpc: string[] | undefined }
  | { ok: false; errors: Partial<Record<keyof LoadFields, string>> };

export const LOAD_FIELD_LABELS: Record<keyof LoadFields, string> = {
  contextSize: 'Context size',
  threads: 'Threads',
  gpuLayers: 'GPU layers',
  remote: 'Remote machines',
};

const ENDPOINT = /^[A-Za-z0-9.-]+:\d{1,5}$/;

function whole(text: string): number | null {
  const t = text.trim();
  return /^-?\d+$/.test(t) ? Number(t) : null;
}

/** Empty means the engine's default (context: min(trained, 4096); threads: the physical cores; GPU layers: all). */
export function checkLoadFields(f: LoadFields): LoadFieldsCheck {
  const errors: Partial<Record<keyof LoadFields, string>> = {};
  let contextSize: number | undefined;
  let threads: number | undefined;
  let gpuLayers = -1;
  if (f.contextSize.trim() !== '') {
    const n = whole(f.contextSize);
    if (n === null || n < 16 || n > 16_777_216)
      errors.contextSize = 'Context size must be a whole number of tokens from 16 (empty: the model’s, at most 4096).';
    else contextSize = n;
  }
  if (f.threads.trim() !== '') {
    const n = whole(f.threads);
    if (n === null || n < 1 || n > 1024) errors.threads = 'Threads must be a whole number from 1 to 1024 (empty: the physical cores).';
    else threads = n;
  }
  if (f.gpuLayers.trim() !== '') {
    const n = whole(f.gpuLayers);
    if (n === null || n < -1 || n > 100000) errors.gpuLayers = 'GPU layers must be a whole number (-1 for all layers).';
    else gpuLayers = n;
  }
  const endpoints = f.remote.split(/[\s,]+/).filter((e) => e !== '');
  const bad = endpoints.find((e) => !ENDPOINT.test(e) || Number(e.split(':')[1]) > 65535);
  if (bad !== undefined) errors.remote = `Remote machines are host:port of a running power rpc, separated by commas (not '${bad}').`;
  else if (endpoints.length > 16) errors.remote = 'Remote machines: at most 16.';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, contextSize, threads, gpuLayers, rpc: endpoints.length > 0 ? endpoints : undefined };
}
