// The default model a front door offers at start (app/service/default-model.ts; `power serve
// --default-model`, npm start's POWER_DEFAULT_MODEL): it joins the library and is loaded when
// nothing else was chosen, a last load of another model is left alone, a last load of the
// default itself is repeated with its settings, and a file that cannot be offered never stops
// the service.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { createPowerService } from '../../app/service/index.js';
import type { PowerService } from '../../app/service/types.js';
import { syntheticModels } from '../fixtures/models.js';
import { startPowerServe } from '../fixtures/serve.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

describe('the default model', () => {
  const tmp = suiteTempDir('power-default-model-');

  async function start(dataDir: string, path: string): Promise<{ service: PowerService; lines: string[] }> {
    const lines: string[] = [];
    const service = await createPowerService({ dataDir, engine: { testHooks: true }, defaultModel: { path, log: (l) => lines.push(l) } });
    return { service, lines };
  }

  test('a fresh data folder: the file joins the library and is loaded with ngram', async () => {
    const models = await syntheticModels();
    const { service, lines } = await start(join(tmp(), 'fresh'), models['target.gguf']);
    try {
      const { entries } = await service.models.list({});
      assert.deepEqual(
        entries.map((e) => e.path),
        [models['target.gguf']],
      );
      const state = await service.engine.state({});
      assert.equal(state.status, 'ready');
      assert.equal(state.model?.path, models['target.gguf']);
      assert.deepEqual(state.options?.draftMethod, { strategy: 'ngram', fallbacks: [] });
      assert.deepEqual(lines, ['target loaded (ngram)']);
    } finally {
      await service.close();
    }
  });

  test('a last load of another model: the default joins the library, the engine stays unloaded', async () => {
    const models = await syntheticModels();
    const dataDir = join(tmp(), 'other');
    const first = await createPowerService({ dataDir, engine: { testHooks: true } });
    try {
      const { added } = await first.models.add({ path: models['draft-close.gguf'] });
      await first.engine.load({ modelId: added[0]!.id, device: 'cpu', threads: 1 });
    } finally {
      await first.close();
    }
    const { service, lines } = await start(dataDir, models['target.gguf']);
    try {
      assert.equal((await service.engine.state({})).status, 'unloaded');
      assert.deepEqual(
        (await service.models.list({})).entries.map((e) => e.name),
        ['draft-close', 'target'],
      );
      assert.deepEqual(lines, ['target is in the library; not loaded, since the last load was another model']);
    } finally {
      await service.close();
    }
  });

  test('a last load of the default itself is repeated with its settings', async () => {
    const models = await syntheticModels();
    const dataDir = join(tmp(), 'same');
    const first = await start(dataDir, models['target.gguf']);
    try {
      const modelId = (await first.service.engine.state({})).options!.modelId;
      await first.service.engine.load({ modelId, device: 'cpu', threads: 1, contextSize: 512, draftMethod: { strategy: 'none' } });
    } finally {
      await first.service.close();
    }
    const { service, lines } = await start(dataDir, models['target.gguf']);
    try {
      const state = await service.engine.state({});
      assert.equal(state.status, 'ready');
      assert.equal(state.contextSize, 512);
      assert.deepEqual(state.options?.draftMethod, { strategy: 'none', fallbacks: [] });
      assert.equal((await service.models.list({})).entries.length, 1);
      assert.deepEqual(lines, ['target loaded (none)']);
    } finally {
      await service.close();
    }
  });

  test('a file that is no model: the service starts without it and says why', async () => {
    const notModel = join(tmp(), 'notes.gguf');
    await writeFile(notModel, 'not a GGUF file');
    const { service, lines } = await start(join(tmp(), 'bad'), notModel);
    try {
      assert.equal((await service.engine.state({})).status, 'unloaded');
      assert.deepEqual((await service.models.list({})).entries, []);
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /^default model .*notes\.gguf not offered: /);
    } finally {
      await service.close();
    }
  });

  test('power serve --default-model loads it at start', async () => {
    const models = await syntheticModels();
    const serve = await startPowerServe(['--data-dir', join(tmp(), 'serve'), '--default-model', models['target.gguf']]);
    await serve.stop();
    // stdout and stderr are two pipes: all of stderr is read once it has ended
    if (!serve.child.stderr!.readableEnded) await once(serve.child.stderr!, 'end');
    const lines = serve.stderr().trimEnd().split('\n');
    assert.ok(lines.includes('power serve: target loaded (ngram)'), serve.stderr());
    assert.ok(lines.indexOf('power serve: target loaded (ngram)') < lines.findIndex((l) => l.includes('stopping')), serve.stderr());
  });
});
