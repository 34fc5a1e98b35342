// The image flags of `power generate`: --image FILE (repeatable) and --mmproj FILE, the projector
// that turns them into the model's input embeddings (else the one paired beside the model,
// app/models/projector.ts). The files are read here, the images decoded in the engine.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';

import type { MediaPrompt } from '../engine/protocol.js';
import type { GgufInfo } from '../gguf/types.js';
import { describeFsError } from '../models/check-file.js';
import { str, type Parsed } from './args.js';
import { UsageError } from './errors.js';
import { pairingFor } from './info-projector.js';

export const IMAGE_FLAGS = {
  image: { type: 'string', multiple: true },
  mmproj: { type: 'string' },
} as const;

/** the largest image file read (a photo from a camera is a few MB; the projector resizes it anyway) */
export const IMAGE_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** The --image paths in order; a usage error for --mmproj without an image. */
export function imagePaths(values: Parsed['values']): string[] {
  const given = values.image;
  const paths = Array.isArray(given) ? given.filter((v): v is string => typeof v === 'string') : [];
  if (paths.length === 0 && str(values, 'mmproj') !== undefined) throw new UsageError('--mmproj goes with --image FILE');
  return paths;
}

/** The images' bytes, each a regular file under IMAGE_FILE_MAX_BYTES (a usage error names the one that is not). */
export async function readImages(paths: readonly string[]): Promise<MediaPrompt['images']> {
  const out: MediaPrompt['images'] = [];
  for (const path of paths) {
    try {
      const st = await stat(path);
      // a FIFO or a device would block the reader for ever
      if (!st.isFile()) throw new UsageError(`--image ${path}: not a file`);
      if (st.size === 0) throw new UsageError(`--image ${path}: the file is empty`);
      if (st.size > IMAGE_FILE_MAX_BYTES) {
        throw new UsageError(`--image ${path}: ${st.size} bytes, more than the ${IMAGE_FILE_MAX_BYTES} an image may have`);
      }
      out.push(new Uint8Array(await readFile(path)));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`--image ${path}: ${describeFsError(error)}`);
    }
  }
  return out;
}

/** The projector for the images: --mmproj's, else the one beside the model; a usage error when none fits. */
export async function imageProjector(modelPath: string, model: GgufInfo, mmproj: string | undefined): Promise<string> {
  const { pairing } = await pairingFor(modelPath, model, mmproj);
  if (!pairing) {
    throw new UsageError(
      `--image needs the model's projector: there is no mmproj-*.gguf beside ${basename(modelPath)} (give one with --mmproj FILE)`,
    );
  }
  if (!pairing.compatible) throw new UsageError(`${basename(pairing.path)} does not fit ${basename(modelPath)}: ${pairing.reason}`);
  if (!pairing.accepts.image) throw new UsageError(`${basename(pairing.path)} takes no images (it is an audio projector)`);
  return pairing.path;
}
