// `suffix` in the app's service: a model loaded for it keeps its store of earlier replies in the
// data folder (suffix-store/<model id>.bin), on by default, and a regenerate drafts from it; the
// replies equal the autoregressive control's.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { ask, serviceForSuite, startedReply } from '../fixtures/service.js';

describe('suffix in the service', () => {
  const f = serviceForSuite();

  test('a regenerate drafts from the store the data folder keeps, and equals the control', async () => {
    const { service, models, dataDir } = f;
    const modelId = models['target.gguf']!.id;
    await service.engine.load({ modelId, device: 'cpu', threads: 1, contextSize: 1024, draftMethod: { strategy: 'suffix' } });
    const file = join(dataDir, 'suffix-store', `${modelId}.bin`);
    const chat = await service.chats.create({});
    const control = await ask(service, chat.id, 'one two three four five', { maxTokens: 40, profileId: 'autoregressive' });
    assert.equal(control.end.kind, 'done');
    const regenerate = async () => {
      const { end } = await startedReply(
        service,
        service.chats.regenerate({ chatId: chat.id, profileId: 'balanced', sampling: { maxTokens: 40 } }),
      );
      const reply = await end;
      assert.equal(reply.kind, 'done', JSON.stringify(reply.error));
      return { digest: reply.digest!, stats: reply.stats! };
    };
    const first = await regenerate();
    const again = await regenerate(); // the first reply went to the store as this one started
    const want = { digest: control.end.digest!, stats: control.end.stats };
    assertDraftedSameAsControl([first, again], [want, want], { label: 'suffix regenerates in the service', accepted: true });
    assert.ok(
      again.stats.accepted > first.stats.accepted,
      `the regenerate accepted ${again.stats.accepted}, the first suffix reply ${first.stats.accepted}`,
    );
    assert.ok(existsSync(file) && statSync(file).size > 12, `the store's file ${file} holds the reply`);
  });
});
