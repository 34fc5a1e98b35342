// The multimodal-projector part of `power info`: describing an `mmproj-*.gguf` itself, and the
// projector a model pairs with (the one beside it, or the one --mmproj names), checked.
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';

import { formatBytes } from '../engine/memory-estimate.js';
import { parameterCount, readGgufInfo } from '../gguf/reader.js';
import type { GgufInfo } from '../gguf/types.js';
import { describeFsError } from '../models/check-file.js';
import {
  describeAccepts,
  pairProjector,
  projectorFacts,
  projectorFor,
  type ProjectorFacts,
  type ProjectorPairing,
} from '../models/projector.js';
import { UsageError } from './errors.js';

function imageLine(f: ProjectorFacts): string {
  if (!f.accepts.image) return 'no vision encoder';
  const cost = f.tokensPerImage !== null ? `${f.tokensPerImage} tokens per image` : "tokens per image depend on the image's size";
  return `${f.imageSize}x${f.imageSize} pixels in ${f.patchSize}x${f.patchSize} patches: ${cost}`;
}

/** `power info mmproj-X.gguf`: the projector's facts (JSON object and text lines). */
export function projectorReport(path: string, info: GgufInfo): { json: object; lines: string[] } {
  const facts = projectorFacts(info);
  if (typeof facts === 'string') throw new UsageError(`${path}: ${facts}`);
  const name = info.metadata.get('general.name');
  const parameters = parameterCount(info);
  const accepts = [...(facts.accepts.image ? ['image'] : []), ...(facts.accepts.audio ? ['audio'] : [])].join(', ');
  return {
    json: { kind: 'projector', name: name?.type === 'string' ? name.value : '', parameters, ...facts },
    lines: [
      `projector     ${path}`,
      `kind          multimodal projector (clip, ${facts.projectorType} projector): not a chat model`,
      `accepts       ${accepts}`,
      `image         ${imageLine(facts)}`,
      `output width  ${facts.outputWidth ?? 'unknown'}${facts.outputWidth !== null ? ` (pairs with a model whose embeddings are ${facts.outputWidth} wide)` : ''}`,
      `parameters    ${parameters.toLocaleString('en-US')} (${formatBytes(facts.weightsBytes)})`,
    ],
  };
}

/** The projector paired with a model (--mmproj's when given), with its header when it fits. */
export async function pairingFor(
  modelPath: string,
  model: GgufInfo,
  mmproj: string | undefined,
): Promise<{ pairing: ProjectorPairing | null; gguf: GgufInfo | null }> {
  let pairing: ProjectorPairing | null;
  if (mmproj !== undefined) {
    let info;
    try {
      // a FIFO or a device would block the reader for ever
      if (!(await stat(mmproj)).isFile()) throw new UsageError(`--mmproj ${mmproj}: not a file`);
      info = await readGgufInfo(mmproj);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const why = (error as NodeJS.ErrnoException).code ? describeFsError(error) : (error as Error).message;
      throw new UsageError(`--mmproj ${mmproj}: ${why}`);
    }
    const facts = projectorFacts(info);
    if (typeof facts === 'string') throw new UsageError(`--mmproj ${mmproj}: ${facts}`);
    pairing = pairProjector(model, facts);
  } else {
    pairing = await projectorFor(modelPath, model);
  }
  return { pairing, gguf: pairing?.compatible ? await readGgufInfo(pairing.path) : null };
}

/** The text report's projector lines. */
export function describePairing(p: ProjectorPairing | null): string[] {
  const lines = [`accepts       ${describeAccepts(p)}`];
  if (!p) return lines;
  lines.push(`projector     ${p.path}`, `  kind        ${p.projectorType} projector (${basename(p.path)})`);
  if (p.accepts.image) lines.push(`  image       ${imageLine(p)}`);
  lines.push(
    `  width       ${p.outputWidth ?? 'unknown'}; weights ${formatBytes(p.weightsBytes)}`,
    `  fits model  ${p.compatible ? 'yes' : `no: ${p.reason}`}`,
  );
  return lines;
}
