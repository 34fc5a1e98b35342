// Images attached to a chat message, as they cross every boundary: base64 text (JSON over /ws,
// a string over IPC), checked by their first bytes rather than by a name or a claimed type, so
// that what reaches the projector's decoder is one of the formats it reads. Pure: the renderer
// checks a file before it sends it with the same rules the service applies.
import { z } from 'zod';

/**
 * The largest image: one must cross /ws in one frame (16 MiB of JSON, and base64 is 4/3 of the
 * bytes); the projector scales every image down to its own side (896 px for Gemma 3) anyway.
 */
export const IMAGE_MAX_BYTES = 12_000_000;
/** images in one message */
export const IMAGES_PER_MESSAGE = 8;

/** The formats the projector's decoder (stb_image in llama.cpp's multimodal library) reads, as Power accepts them. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/bmp', 'image/x-portable-anymap'] as const;
export const ImageType = z.enum(IMAGE_TYPES);
export type ImageType = z.infer<typeof ImageType>;

export const SUPPORTED_IMAGES = 'PNG, JPEG, GIF, BMP, PPM/PGM';

/** what some formats Power does not read look like, to name them in the refusal */
const OTHER_FORMATS: Array<[string, (b: Uint8Array) => boolean]> = [
  ['WebP', (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP'],
  ['HEIC/AVIF', (b) => ascii(b, 4, 8) === 'ftyp'],
  ['SVG', (b) => /^\s*(<\?xml|<svg)/i.test(ascii(b, 0, b.length))],
  ['TIFF', (b) => ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*'],
];

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, Math.min(to, bytes.length)));
}

/** The format of an image by its first bytes (16 are enough), or null when it is none Power reads. */
export function imageType(head: Uint8Array): ImageType | null {
  const b = head;
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 8) === 'PNG\r\n\x1a\n') return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(b, 0, 2) === 'BM' && b.length >= 14) return 'image/bmp';
  // binary PGM (P5) and PPM (P6): what stb_image's PNM reader takes
  if (/^P[56]\s$/.test(ascii(b, 0, 3))) return 'image/x-portable-anymap';
  return null;
}

/** Why an image's first bytes are refused: what they look like, and what Power reads. */
export function imageTypeProblem(head: Uint8Array): string {
  const other = OTHER_FORMATS.find(([, looks]) => looks(head))?.[0];
  return `${other ? `${other} is` : 'this is'} not an image format Power reads (${SUPPORTED_IMAGES})`;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The number of bytes a base64 text holds. */
export function base64Bytes(text: string): number {
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - pad;
}

/** The first bytes of a base64 text (at most 18). */
function base64Head(text: string): Uint8Array {
  // 24 characters are whole groups of 4 (the text's length is a multiple of 4)
  const head = atob(text.slice(0, 24));
  return Uint8Array.from(head, (c) => c.charCodeAt(0));
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

function tooLarge(bytes: number): string | null {
  return bytes > IMAGE_MAX_BYTES ? `the image is ${megabytes(bytes)}: at most ${megabytes(IMAGE_MAX_BYTES)} per image` : null;
}

/** Why a base64 image is refused (null: it is one Power reads, of an allowed size). */
export function imageDataProblem(data: string): string | null {
  if (data.length === 0) return 'the image is empty';
  if (data.length % 4 !== 0 || !BASE64.test(data)) return 'the image is not valid base64';
  const large = tooLarge(base64Bytes(data));
  if (large) return large;
  const head = base64Head(data);
  return imageType(head) ? null : imageTypeProblem(head);
}

/** Why an image's bytes are refused, by the same rules (null: it is one Power reads, of an allowed size). */
export function imageBytesProblem(bytes: Uint8Array): string | null {
  if (bytes.length === 0) return 'the image is empty';
  const large = tooLarge(bytes.length);
  if (large) return large;
  const head = bytes.subarray(0, 16);
  return imageType(head) ? null : imageTypeProblem(head);
}

/** An image's bytes as base64: checked for its format (by its first bytes) and its size. */
export const ImageData = z
  .string()
  // the text of the largest image, before the check that says so in words
  .max(Math.ceil(IMAGE_MAX_BYTES / 3) * 4 + 4, { error: `an image is at most ${megabytes(IMAGE_MAX_BYTES)}` })
  .superRefine((data, ctx) => {
    const problem = imageDataProblem(data);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, { error: 'a sha256 is 64 lowercase hex digits' });

/** An image as a message records it: its content address in the data folder, never its bytes. */
export const ChatImage = z.object({
  sha256: Sha256Hex,
  type: ImageType,
  bytes: z.number().int().min(1),
  /** the file's name, when it had one (a pasted image has none) */
  name: z.string().max(255).optional(),
});
export type ChatImage = z.infer<typeof ChatImage>;
