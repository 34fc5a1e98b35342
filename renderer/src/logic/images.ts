// Images in a message being written: whether the loaded model can read them (its projector), and a file's
// check before it is sent (the service checks again: these are the same rules, from the contract).
import {
  IMAGE_MAX_BYTES,
  IMAGES_PER_MESSAGE,
  imageType,
  imageTypeProblem,
  megabytes,
  type ImageType,
} from '../../../app/contract/images.js';
import type { ChatImage, EngineState, ModelEntry } from '../api-types.js';

/** Why images cannot be attached now, in words (null: they can). */
export function imageBlocker(engine: EngineState | null, models: readonly ModelEntry[]): string | null {
  const loaded = engine?.model;
  if (!loaded) return 'Load a model first: images need a model with a projector.';
  const entry = models.find((m) => m.id === loaded.id);
  const projector = entry?.projector;
  if (!projector) return `${loaded.name} reads text only: images need its projector (an mmproj-*.gguf beside the model file).`;
  if (!projector.compatible) return `${loaded.name}: its projector does not fit (${projector.reason ?? 'unknown reason'}).`;
  if (!projector.accepts.image) return `${loaded.name}: its projector reads no images.`;
  return null;
}

/** Why one more image (of `size` bytes) cannot join the `pending` ones; null when it can. */
export function attachProblem(name: string, size: number, pending: number): string | null {
  if (pending >= IMAGES_PER_MESSAGE) return `At most ${IMAGES_PER_MESSAGE} images per message.`;
  if (size === 0) return `${name} is empty.`;
  if (size > IMAGE_MAX_BYTES) return `${name} is ${megabytes(size)}: at most ${megabytes(IMAGE_MAX_BYTES)} per image.`;
  return null;
}

/** The format of a file by its first bytes, or why it is refused. */
export function fileImageType(name: string, head: Uint8Array): { type: ImageType } | { problem: string } {
  const type = imageType(head);
  return type ? { type } : { problem: `${name}: ${imageTypeProblem(head)}.` };
}

/** Whether a browser shows the format (PPM/PGM it does not: a tile with the name stands in). */
export function browserShows(type: ImageType): boolean {
  return type !== 'image/x-portable-anymap';
}

/** Base64 of bytes, in chunks (a spread of megabytes into fromCharCode overflows the stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A message's images as the service's methods take them: each by its sha256, with its name. */
export function imageRefs(images: readonly ChatImage[]): Array<{ sha256: string; name?: string }> {
  return images.map((i) => ({ sha256: i.sha256, ...(i.name ? { name: i.name } : {}) }));
}
