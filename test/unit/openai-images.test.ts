// How /v1 reads image parts of chat messages (app/serve/openai/images.ts, api.ts): data: URLs
// only, each image the media marker in its message's text, every bad part refused with the reason
// (the bytes by the chat's own check: format by the first bytes, size).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChatCompletionRequest, chatMessages, messageImages, toolUse } from '../../app/serve/openai/api.js';
import { imageBytes, MEDIA_MARKER } from '../../app/serve/openai/images.js';
import { IMAGE_MAX_BYTES } from '../../app/contract/images.js';
import { pngImage } from '../fixtures/images.js';

const PIXELS = Buffer.from('P6\n1 1\n255\n\xff\x00\x00', 'latin1');
const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const ask = (content: unknown[]) => ChatCompletionRequest.parse({ model: 'm', messages: [{ role: 'user', content }] });
const refusal = (url: string) => {
  try {
    imageBytes(image(url) as never);
  } catch (error) {
    const e = error as { code: string; message: string };
    return `${e.code}: ${e.message}`;
  }
  return 'read';
};

describe('image parts', () => {
  test('an image part is the media marker where it stands in the text, its bytes in prompt order', () => {
    const second = Buffer.from(pngImage(4, 4, 1));
    const r = ask([
      { type: 'text', text: 'what is this?' },
      image(dataUrl('image/x-portable-pixmap', PIXELS)),
      // the bytes say what an image is, as for a chat's images: a PNG named JPEG is read
      image(dataUrl('image/jpeg', second)),
    ]);
    assert.deepEqual(chatMessages(r.messages), [{ role: 'user', content: `what is this?\n${MEDIA_MARKER}\n${MEDIA_MARKER}` }]);
    assert.deepEqual(
      messageImages(r.messages).map((b) => Buffer.from(b)),
      [PIXELS, second],
    );
  });

  test("a remote URL, a media type that is no image's, a URL without base64 or with bad base64, an image Power does not read or too large is refused with the reason", () => {
    assert.match(refusal('https://example.com/cat.png'), /^unsupported: .*data: URLs only.*does not fetch remote URLs/);
    assert.match(refusal(dataUrl('text/plain', PIXELS)), /^unsupported: .*'text\/plain' is not an image's media type/);
    const webp = Buffer.concat([Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'), Buffer.alloc(8)]);
    assert.match(
      refusal(dataUrl('image/webp', webp)),
      /^bad-input: image_url: WebP is not an image format Power reads \(PNG, JPEG, GIF, BMP, PPM\/PGM\)$/,
    );
    assert.match(refusal(dataUrl('image/png', Buffer.from('hello'))), /^bad-input: image_url: this is not an image format Power reads/);
    const huge = Buffer.concat([Buffer.from(pngImage(4, 4, 1)), Buffer.alloc(IMAGE_MAX_BYTES)]);
    assert.match(refusal(dataUrl('image/png', huge)), /^bad-input: image_url: the image is 12 MB: at most 12 MB per image$/);
    assert.match(refusal('data:image/png,rawbytes'), /^bad-input: .*must be base64/);
    assert.match(refusal('data:image/png;base64,@@@'), /^bad-input: .*invalid base64/);
    assert.match(refusal('data:image/png;base64,'), /^bad-input: .*empty/);
    assert.match(refusal('file:///etc/passwd'), /^bad-input: .*not a data: URL/);
    assert.equal(
      ChatCompletionRequest.safeParse({ model: 'm', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }).success,
      false,
    );
  });

  test('images with tools are refused with the reason', () => {
    const r = ChatCompletionRequest.parse({
      model: 'm',
      messages: [{ role: 'user', content: [image(dataUrl('image/png', PIXELS))] }],
      tools: [{ type: 'function', function: { name: 'f' } }],
    });
    assert.throws(() => toolUse(r), /images cannot go with tools yet/);
  });
});
