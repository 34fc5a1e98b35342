// Images of chat messages at the boundary and on disk: the contract takes the formats the
// projector's decoder reads (by their first bytes, whatever the name says), refuses the others
// with what they are, an image over the size limit and too many images; the largest image
// crosses /ws in one frame; the data folder keeps each image once and removes one when no chat
// holds it any more (a deleted chat, an image never sent), never one a chat that did not load names.
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { powerApi } from '../../app/contract/api/index.js';
import type { Chat } from '../../app/contract/api/chats.js';
import { IMAGE_MAX_BYTES, IMAGES_PER_MESSAGE, ImageData, imageType } from '../../app/contract/images.js';
import { encodeFrame, WS_MAX_MESSAGE_BYTES } from '../../app/contract/transport/ws-protocol.js';
import { ChatStore } from '../../app/service/chat-store.js';
import type { EngineState, ModelEntry } from '../../renderer/src/api-types.js';
import { attachProblem, fileImageType, imageBlocker, toBase64 } from '../../renderer/src/logic/images.js';
import { pngImage, ppmImage } from '../fixtures/images.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const bytesOf = (...parts: Array<number[] | string>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : p)));
/** a file of `size` bytes that begins like `head` */
const sized = (head: Uint8Array, size: number): Uint8Array => {
  const out = new Uint8Array(size);
  out.set(head);
  return out;
};

const SAMPLES = {
  'image/png': pngImage(4, 4, 1),
  'image/jpeg': bytesOf([0xff, 0xd8, 0xff, 0xe0], '\0\x10JFIF\0'),
  'image/gif': bytesOf('GIF89a', [1, 0, 1, 0, 0, 0, 0]),
  'image/bmp': bytesOf('BM', [70, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0]),
  'image/x-portable-anymap': ppmImage(2, 2, 1),
};

const refusal = (data: string): string => {
  const r = ImageData.safeParse(data);
  assert.equal(r.success, false, 'refused');
  return r.error!.issues[0]!.message;
};

describe('chat images at the boundary', () => {
  test('PNG, JPEG, GIF, BMP and PPM are taken by their first bytes', () => {
    for (const [type, bytes] of Object.entries(SAMPLES)) {
      assert.equal(imageType(bytes), type);
      assert.equal(ImageData.safeParse(b64(bytes)).success, true, type);
    }
  });

  test('another format is refused with what it is and what Power reads', () => {
    assert.match(refusal(b64(bytesOf('RIFF', [0, 0, 0, 0], 'WEBPVP8 '))), /^WebP is not an image format Power reads \(PNG, JPEG, GIF, BMP/);
    assert.match(refusal(b64(bytesOf([0, 0, 0, 0x18], 'ftypheic', [0, 0, 0, 0]))), /^HEIC\/AVIF is not/);
    assert.match(refusal(b64(bytesOf('<svg xmlns="http://www.w3.org/2000/svg"/>'))), /^SVG is not/);
    assert.match(refusal(b64(bytesOf('hello, this is text'))), /^this is not an image format Power reads/);
    // a PNG's name on a text file changes nothing: the bytes decide
    assert.match(refusal(b64(bytesOf('\x89PNX\r\n\x1a\n'))), /not an image format/);
  });

  test('empty, bad base64 and an image over the limit are refused in words', () => {
    assert.match(refusal(''), /the image is empty/);
    assert.match(refusal('iVBORw0KGgo*AAAA'), /not valid base64/);
    assert.match(refusal('iVBORw0KGgo'), /not valid base64/);
    const over = b64(sized(SAMPLES['image/png'], IMAGE_MAX_BYTES + 1));
    assert.match(refusal(over), /the image is 12 MB: at most 12 MB per image/);
    assert.equal(ImageData.safeParse(b64(sized(SAMPLES['image/png'], IMAGE_MAX_BYTES))).success, true, 'the limit itself is taken');
  });

  test('the largest image crosses /ws in one frame', () => {
    const input = { data: b64(sized(SAMPLES['image/jpeg'], IMAGE_MAX_BYTES)), name: 'n'.repeat(255) };
    assert.equal(powerApi.chats.methods.addImage.input.safeParse(input).success, true);
    const frame = encodeFrame({ id: 1_000_000, concern: 'chats', method: 'addImage', input });
    assert.ok(frame.length <= WS_MAX_MESSAGE_BYTES, `${frame.length} bytes`);
  });

  test('a message holds text or images, at most IMAGES_PER_MESSAGE of them', () => {
    const send = powerApi.chats.methods.send.input;
    const chatId = '00000000-0000-4000-8000-000000000001';
    const image = { sha256: 'a'.repeat(64) };
    assert.equal(send.safeParse({ chatId, content: '', images: [image] }).success, true, 'an image alone');
    assert.match(send.safeParse({ chatId, content: '  ' }).error!.issues[0]!.message, /a message needs text or an image/);
    const many = send.safeParse({ chatId, content: 'x', images: Array(IMAGES_PER_MESSAGE + 1).fill(image) });
    assert.match(many.error!.issues[0]!.message, new RegExp(`at most ${IMAGES_PER_MESSAGE} images per message`));
    assert.match(send.safeParse({ chatId, content: 'x', images: [{ sha256: 'X'.repeat(64) }] }).error!.issues[0]!.message, /sha256/);
  });
});

describe('chat images in the composer', () => {
  const engine = { model: { id: 'm1', name: 'swa-target', path: '/m/swa-target.gguf' } } as EngineState;
  const entry = (projector: Partial<NonNullable<ModelEntry['projector']>> | null): ModelEntry =>
    ({
      id: 'm1',
      name: 'swa-target',
      projector: projector && { compatible: true, accepts: { image: true, audio: false }, ...projector },
    }) as ModelEntry;

  test('the attach button says why a model reads no images', () => {
    assert.match(imageBlocker(null, [])!, /Load a model first/);
    assert.match(imageBlocker(engine, [entry(null)])!, /^swa-target reads text only: images need its projector/);
    assert.match(
      imageBlocker(engine, [entry({ compatible: false, reason: 'width 128, model 64' })])!,
      /does not fit \(width 128, model 64\)/,
    );
    assert.equal(imageBlocker(engine, [entry({})]), null);
  });

  test('a file is checked before it is sent, with the contract’s rules', () => {
    assert.equal(attachProblem('a.png', 10, 0), null);
    assert.match(attachProblem('a.png', 10, IMAGES_PER_MESSAGE)!, /At most 8 images per message/);
    assert.match(attachProblem('big.jpg', IMAGE_MAX_BYTES + 1, 0)!, /^big\.jpg is 12 MB: at most 12 MB per image/);
    assert.match(attachProblem('e.png', 0, 0)!, /is empty/);
    assert.deepEqual(fileImageType('a.png', pngImage(2, 2, 1)), { type: 'image/png' });
    assert.deepEqual(fileImageType('notes.png', bytesOf('just text')), {
      problem: 'notes.png: this is not an image format Power reads (PNG, JPEG, GIF, BMP, PPM/PGM).',
    });
    const big = pngImage(300, 300, 2);
    assert.equal(toBase64(big), b64(big), 'base64 in chunks equals Node’s');
  });
});

describe('chat images on disk', () => {
  const dir = suiteTempDir('power-chat-images-');
  const chatWith = (id: number, images: Awaited<ReturnType<ChatStore['addImage']>>[]): Chat => ({
    id: `00000000-0000-4000-8000-00000000000${id}`,
    title: 't',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    systemPrompt: null,
    messages: [{ id: 'u1', role: 'user', content: 'look', createdAt: '2026-01-01T00:00:00.000Z', images }],
  });
  const stored = async (data: string): Promise<string[]> => (await readdir(join(data, 'chat-images'))).sort();

  test('each image is kept once; a deleted chat takes the images no other chat holds', async () => {
    const data = join(dir(), 'delete');
    const store = await ChatStore.open(data, { log: () => {} });
    const shared = await store.addImage(pngImage(8, 8, 1), 'a.png');
    const again = await store.addImage(pngImage(8, 8, 1));
    assert.equal(again.sha256, shared.sha256);
    assert.deepEqual(
      { ...shared, name: undefined },
      { sha256: shared.sha256, type: 'image/png', bytes: pngImage(8, 8, 1).length, name: undefined },
    );
    const own = await store.addImage(ppmImage(3, 3, 2), 'b.ppm');
    assert.equal(own.type, 'image/x-portable-anymap');
    await store.add(chatWith(1, [shared, own]));
    await store.add(chatWith(2, [shared]));
    store.imagesUsed([shared, own]);
    assert.deepEqual(await stored(data), [shared.sha256, own.sha256].sort());
    await store.delete(chatWith(1, []).id);
    assert.deepEqual(await stored(data), [shared.sha256], 'the image of chat 2 stays');
    assert.deepEqual([...(await store.image(shared.sha256))], [...pngImage(8, 8, 1)]);
    await assert.rejects(store.image(own.sha256), /not in the data folder/);
  });

  test('an image never sent goes at the next start; one that a chat which did not load names stays', async () => {
    const data = join(dir(), 'start');
    const store = await ChatStore.open(data, { log: () => {} });
    const sent = await store.addImage(pngImage(4, 4, 3));
    const unsent = await store.addImage(pngImage(4, 4, 4));
    const named = await store.addImage(pngImage(4, 4, 5));
    await store.add(chatWith(1, [sent]));
    // a chat file this Power cannot read (a newer one's) that refers to an image
    const newer = chatWith(2, [named]);
    await writeFile(join(data, 'chats', `${newer.id}.json`), JSON.stringify({ format: 'power.chat', version: 99, data: newer }));
    const lines: string[] = [];
    const reopened = await ChatStore.open(data, { log: (l) => lines.push(l) });
    assert.deepEqual(await stored(data), [sent.sha256, named.sha256].sort(), `${unsent.sha256} went`);
    assert.equal(reopened.unloaded.length, 1);
  });
});
