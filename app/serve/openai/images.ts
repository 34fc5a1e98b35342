// Images in OpenAI chat messages: `{ type: "image_url", image_url: { url } }` content parts, as
// llama-server takes them. Power reads an image from a data: URL only; a remote URL would have it
// fetch from the network on a client's behalf, so it is refused with the reason. Each image
// becomes the media marker in the message's text, where the projector's embeddings go.
import { z } from 'zod';

import { PowerError } from '../../contract/api/errors.js';
import { MEDIA_MARKER } from '../../engine/protocol.js';

export const ImagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
export type ImagePart = z.infer<typeof ImagePart>;

export { MEDIA_MARKER };

/** The formats the projector's image decoder (stb_image) reads, by their media type. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif', 'image/bmp', 'image/x-portable-pixmap']);

/** The bytes of an image part's data: URL; a remote URL, another media type or bad base64 is refused with the reason. */
export function imageBytes(part: ImagePart): Uint8Array<ArrayBuffer> {
  const url = part.image_url.url;
  if (/^https?:/i.test(url)) {
    throw new PowerError(
      'unsupported',
      'image_url: Power reads images from data: URLs only (data:image/png;base64,...); it does not fetch remote URLs',
    );
  }
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!m) throw new PowerError('bad-input', `image_url: not a data: URL (starts '${url.slice(0, 24)}')`);
  const type = m[1]!.toLowerCase();
  if (!IMAGE_TYPES.has(type)) {
    throw new PowerError(
      'unsupported',
      `image_url: '${type || 'no media type'}' is not an image format Power reads (PNG, JPEG, GIF, BMP, PPM)`,
    );
  }
  if (!m[2]!.split(';').includes('base64')) throw new PowerError('bad-input', 'image_url: the data: URL must be base64 (;base64,)');
  const text = m[3]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
    throw new PowerError('bad-input', 'image_url: the data: URL holds invalid base64');
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0) throw new PowerError('bad-input', 'image_url: the image is empty');
  return Uint8Array.from(bytes);
}
