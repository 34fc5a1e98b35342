// How /v1 reads image parts of chat messages (app/serve/openai/images.ts, api.ts): data: URLs
// only, each image the media marker in its message's text, every bad part refused with the reason.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChatCompletionRequest, chatMessages, messageImages, toolUse } from '../../app/serve/openai/api.js';
import { imageBytes, MEDIA_MARKER } from '../../app/serve/openai/images.js';

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
    const second = Buffer.from([1, 2, 3]);
    const r = ask([
      { type: 'text', text: 'what is this?' },
      image(dataUrl('image/x-portable-pixmap', PIXELS)),
      image(dataUrl('image/png', second)),
    ]);
    assert.deepEqual(chatMessages(r.messages), [{ role: 'user', content: `what is this?\n${MEDIA_MARKER}\n${MEDIA_MARKER}` }]);
    assert.deepEqual(
      messageImages(r.messages).map((b) => Buffer.from(b)),
      [PIXELS, second],
    );
  });

  test('a remote URL, another media type, a URL without base64 or with bad base64 is refused with the reason', () => {
    assert.match(refusal('https://example.com/cat.png'), /^unsupported: .*data: URLs only.*does not fetch remote URLs/);
    assert.match(refusal(dataUrl('image/webp', PIXELS)), /^unsupported: .*'image\/webp' is not an image format Power reads/);
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
