// power quantize IN.gguf OUT.gguf --recipe NAME [--tensor-types FILE]: writes a quantized copy
// through llama.cpp's own quantizer, run by the engine host (the only process that loads the
// addon). Everything that can be checked is checked before the engine starts; llama.cpp writes a
// temporary file next to OUT, renamed to OUT only once it is complete.
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import { readBuildInfo } from '../engine/build-info.js';
import { readGgufInfo } from '../gguf/reader.js';
import { describeFsError } from '../models/check-file.js';
import { parseTensorTypes, quantPlan, RECIPE_NAMES, RecipeError, type TensorTypeOverride } from '../models/quant-recipes.js';
import { describeGroups, tensorTypesByGroup } from '../models/tensor-groups.js';
import { checkFile, startOnDevice } from '../runtime/open-model.js';
import { int, parseFlags, str } from './args.js';
import { cliError, UsageError } from './errors.js';
import type { Io } from './generate.js';

/** the standard recipes' names, a few to a usage line */
const standard = RECIPE_NAMES.filter((n) => n !== 'tbq4');
const standardNames = [0, 9, 18].map((i) => standard.slice(i, i + 9).join(', ')).join(',\n  ');

export const QUANTIZE_USAGE = `power quantize <in.gguf> <out.gguf> --recipe NAME [--tensor-types FILE] [--allow-requantize] [--threads N] [--force] [--verbose]
  Writes a quantized copy of a model with llama.cpp's quantizer. NAME: tbq4 (Power's MTP
  artifact: MTP block q6_K, FFN q4_0, draft head q4_K, attention q4_K, output/embeddings q6_K)
  or one of llama.cpp's file types:
  ${standardNames}.
  --tensor-types: a file of regex=type lines whose types win over the recipe's (llama.cpp's
  --tensor-type). --allow-requantize: an input already quantized is quantized again (its
  rounding error adds to the new type's). Refuses to replace an existing <out.gguf> without
  --force; prints what each part of the model was stored as.`;

const FLAGS = {
  recipe: { type: 'string' },
  'tensor-types': { type: 'string' },
  'allow-requantize': { type: 'boolean' },
  threads: { type: 'string' },
  force: { type: 'boolean' },
  verbose: { type: 'boolean' },
} as const;

/** Whether two paths name the same file (one may not exist yet). */
async function sameFile(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  const [sa, sb] = await Promise.all([stat(a).catch(() => null), stat(b).catch(() => null)]);
  return sa !== null && sb !== null && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** OUT may be written: not the input, not a directory, replaced only with --force, in a directory that exists. */
async function checkOutput(input: string, output: string, force: boolean): Promise<void> {
  if (await sameFile(input, output)) throw new UsageError(`the output ${output} is the input file: write the quantized copy elsewhere`);
  const existing = await stat(output).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new UsageError(`cannot write ${output}: ${describeFsError(error)}`);
  });
  if (existing?.isDirectory()) throw new UsageError(`the output ${output} is a directory`);
  if (existing && !force) throw new UsageError(`the output ${output} exists (--force replaces it)`);
  const dir = await stat(dirname(resolve(output))).catch(() => null);
  if (!dir?.isDirectory()) throw new UsageError(`cannot write ${output}: its directory ${dirname(resolve(output))} does not exist`);
}

async function readTensorTypes(file: string): Promise<TensorTypeOverride[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the tensor types file ${file}: ${describeFsError(error)}`);
  }
  return parseTensorTypes(text, file);
}

export async function quantizeCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, 2);
  const [input, output] = positionals;
  if (!input || !output)
    throw new UsageError('power quantize needs an input and an output: power quantize <in.gguf> <out.gguf> --recipe NAME');
  const recipe = str(values, 'recipe');
  if (!recipe) throw new UsageError(`power quantize needs --recipe (${RECIPE_NAMES.join(', ')})`);
  if (!RECIPE_NAMES.includes(recipe.toLowerCase())) throw new UsageError(`unknown recipe '${recipe}' (known: ${RECIPE_NAMES.join(', ')})`);
  const threads = int(values, 'threads', { min: 1, max: 1024 }) ?? 0;
  const typesFile = str(values, 'tensor-types');
  const allowRequantize = values['allow-requantize'] === true;

  const gguf = await checkFile(input, readBuildInfo());
  await checkOutput(input, output, values.force === true);
  let plan;
  try {
    plan = quantPlan(recipe, gguf, typesFile ? await readTensorTypes(typesFile) : []);
  } catch (error) {
    if (error instanceof RecipeError) throw new UsageError(error.message);
    throw error;
  }

  const temp = join(dirname(output), `.${basename(output)}.partial-${process.pid}`);
  const { engine } = await startOnDevice('cpu', values.verbose === true).catch((error: unknown) => {
    throw cliError(error);
  });
  let interrupted = false;
  // llama.cpp's quantizer cannot be cancelled: Ctrl-C stops the engine, and the temporary file goes
  const unregister = io.onInterrupt(() => {
    interrupted = true;
    void engine.close();
  });
  try {
    try {
      await engine.call('quantize', { input, output: temp, ...plan, threads, allowRequantize });
    } catch (error) {
      if (interrupted) return 130;
      if (!allowRequantize && error instanceof Error && /requantizing from type \S+ is disabled/.test(error.message))
        throw new UsageError(
          `${input} is already quantized: --allow-requantize quantizes it again, at a cost in quality over its F16 or F32 original`,
        );
      throw cliError(error);
    }
    await rename(temp, output).catch((error: unknown) => {
      throw new UsageError(`cannot write ${output}: ${describeFsError(error)}`);
    });
  } finally {
    unregister();
    await rm(temp, { force: true });
    await engine.close();
  }
  const written = await readGgufInfo(output);
  const size = (await stat(output)).size;
  io.out(`wrote ${output} (recipe ${recipe.toLowerCase()}, ${(size / 2 ** 20).toFixed(2)} MiB)\n`);
  io.out(
    describeGroups(tensorTypesByGroup(written))
      .map((l) => `  ${l}\n`)
      .join(''),
  );
  return 0;
}
