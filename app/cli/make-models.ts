// power make-models [--out DIR] [--force]
import { MODELS_CACHE } from '../paths.js';
import { describeFsError } from '../models/check-file.js';
import { OutputDirError, prepareOutputDir } from '../models/output-dir.js';
import { makeModels, makeProjectorModels, PROJECTOR_MODELS, SYNTHETIC_MODELS } from '../../tools/models/synthetic.js';
import { makeMoeModels, MOE_MODELS } from '../../tools/models/synthetic-moe.js';
import { parseFlags, str } from './args.js';
import { UsageError } from './errors.js';

export const MAKE_MODELS_USAGE = `power make-models [--out DIR] [--force]
  Writes the synthetic GGUF test models (deterministic, cached: unchanged files are kept)
  into DIR (default .cache/models) and lists them, with the multimodal projectors (mmproj-X.gguf
  beside X.gguf).`;

export async function makeModelsCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { values } = parseFlags(argv, { out: { type: 'string' }, force: { type: 'boolean' } }, 0);
  const dir = str(values, 'out') ?? MODELS_CACHE;
  let set;
  let moe;
  let projectors;
  try {
    await prepareOutputDir(dir);
    set = await makeModels(dir, { force: values.force === true, onLog: (line) => out(`${line}\n`) });
    // the MoE target and its draft (qwen3moe), cached by a manifest of their own
    moe = await makeMoeModels(dir, { force: values.force === true, onLog: (line) => out(`${line}\n`) });
    projectors = await makeProjectorModels(dir, { force: values.force === true, onLog: (line) => out(`${line}\n`) });
  } catch (error) {
    if (error instanceof OutputDirError) throw new UsageError(`--out: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code) throw new UsageError(`cannot write the models to ${dir}: ${describeFsError(error)}`);
    throw error;
  }
  for (const [name, path] of Object.entries(set)) {
    out(`${path}  ${SYNTHETIC_MODELS[name as keyof typeof SYNTHETIC_MODELS].description}\n`);
  }
  for (const [name, path] of Object.entries(moe)) {
    out(`${path}  ${MOE_MODELS[name as keyof typeof MOE_MODELS].description}\n`);
  }
  for (const [name, path] of Object.entries(projectors)) {
    out(`${path}  ${PROJECTOR_MODELS[name as keyof typeof PROJECTOR_MODELS].description}\n`);
  }
  return 0;
}
