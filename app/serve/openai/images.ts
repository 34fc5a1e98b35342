// Images in OpenAI chat messages: `{ type: "image_url", image_url: { url } }` content parts, as
// llama-server takes them. Power reads an image from a data: URL only; a remote URL would have it
// fetch from the network on a client's behalf, so it is refused with the reason. The image's
// bytes are checked as a chat's are (app/contract/images.ts: the format by its first bytes,
// whatever the media type claims, and the size). Each image becomes the media marker in the
// message's text, where the projector's embeddings go.
import { z } from 'zod';

import { PowerError } from '../../contract/api/errors.js';
import { imageBytesProblem } from '../../contract/images.js';
import { MEDIA_MARKER } from '../../engine/protocol.js';

export const ImagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
export type ImagePart = z.infer<typeof ImagePart>;

export { MEDIA_MARKER };

/** The bytes of an image part's data: URL; a remote URL, a media type that is no image's, bad base64 or an image Power does not read is refused with the reason. */
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
  if (!type.startsWith('image/'))
    throw new PowerError('unsupported', `image_url: '${type || 'no media type'}' is not an image's media type`);
  if (!m[2]!.split(';').includes('base64')) throw new PowerError('bad-input', 'image_url: the data: URL must be base64 (;base64,)');
  const text = m[3]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
    throw new PowerError('bad-input', 'image_url: the data: URL holds invalid base64');
  }
  const bytes = Uint8Array.from(Buffer.from(text, 'base64'));
  const problem = imageBytesProblem(bytes);
  if (problem) throw new PowerError('bad-input', `image_url: ${problem}`);
  return bytes;
}
