// How /v1 answers a chat request with image parts (app/serve/openai/api.ts: imagePartProblem):
// a remote URL is refused because Power fetches nothing on its own, a data: URL because /v1
// does not hand images to the engine yet; text parts alone pass.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { imagePartProblem } from '../../app/serve/openai/api.js';

const ask = (...content: object[]) => ({
  model: 'm',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content },
  ],
});
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

describe('imagePartProblem', () => {
  test('text parts and string contents pass', () => {
    assert.equal(imagePartProblem(ask({ type: 'text', text: 'hello' })), null);
    assert.equal(imagePartProblem({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }), null);
    assert.equal(imagePartProblem({ model: 'm', prompt: 'hello' }), null);
    assert.equal(imagePartProblem(null), null);
  });

  test('a remote image URL is refused: Power fetches nothing on its own', () => {
    for (const url of ['https://example.com/cat.png', 'http://10.0.0.1/x.jpg']) {
      assert.match(
        imagePartProblem(ask({ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url } })) ?? '',
        /^messages\[1\]: an image_url must be a data: URL \(Power fetches nothing on its own; got "http/,
      );
    }
    assert.match(imagePartProblem(ask({ type: 'image_url', image_url: {} })) ?? '', /must be a data: URL .*got ""\)$/);
  });

  test('a data: URL, as an object or a string, is refused with the reason until /v1 serves images', () => {
    for (const image_url of [{ url: PNG, detail: 'low' }, PNG]) {
      assert.equal(
        imagePartProblem(ask({ type: 'image_url', image_url })),
        'messages[1]: images are not served through /v1 yet (power generate --image takes them)',
      );
    }
  });
});
