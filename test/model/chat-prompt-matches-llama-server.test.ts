// The prompt `power serve` builds for /v1/chat/completions is llama-server's: for the same
// messages (a system prompt and three user turns with two replies between them, and a request in
// OpenAI's other forms: a developer message, content as text parts) the tokens our path gives
// (the request schema, its messages as the template takes them, Conversation.prompt: the
// model's template rendered by @huggingface/jinja, then the engine's tokenizer) equal those of
// llama.cpp's own template application and tokenization (power-chat-template:
// common_chat_templates_apply as llama-server calls it). On every model with a template we have:
// the synthetic target (its Phi-3-style template), the three models on Qwen3.5's real vocabulary
// (its ChatML template), and the real Gemma 3 270M, which has none: llama.cpp falls back to
// ChatML and so do we.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { EngineClient } from '../../app/engine/client.js';
import { ChatCompletionRequest, chatMessages } from '../../app/serve/openai/api.js';
import { Conversation } from '../../app/service/conversation.js';
import { chatTemplateTool, referencePrompt } from '../fixtures/chat-template-reference.js';
import { realVocabModels, syntheticModels } from '../fixtures/models.js';
import { REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';

const CONVERSATIONS: Record<string, object[]> = {
  'a system prompt and three turns': [
    { role: 'system', content: 'You are a concise assistant. Answer in one sentence.' },
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: 'The capital of France is Paris.' },
    { role: 'user', content: 'And of Japan? 日本の首都は？ 🇯🇵' },
    { role: 'assistant', content: 'Tokyo (東京) is the capital of Japan.' },
    { role: 'user', content: 'Write it as code:\n\n    def capital(country):\n\treturn "Tokyo"  \n' },
  ],
  'a developer message and content as text parts': [
    { role: 'developer', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'First part.' },
        { type: 'text', text: 'Second part, ünïcödé.' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Understood.' }] },
    { role: 'user', content: 'Go on.' },
  ],
};

describe('the /v1 chat prompt is llama-server’s, token for token', () => {
  let engine: EngineClient;
  const tool = chatTemplateTool();

  before(() => {
    engine = EngineClient.start();
  });
  after(() => engine?.close());

  /** Our tokens and llama.cpp's for each conversation on one model; fails at the first difference, with context. */
  async function compare(path: string): Promise<{ explicit: boolean; ourTemplate: string | null }> {
    const { modelId, info } = await engine.call('loadModel', { path, gpuLayers: 0 });
    try {
      let explicit = true;
      for (const [name, messages] of Object.entries(CONVERSATIONS)) {
        const request = ChatCompletionRequest.parse({ model: 'm', messages });
        const ours = await new Conversation(engine, modelId, info).prompt(chatMessages(request.messages));
        const theirs = referencePrompt(path, messages);
        explicit = theirs.explicit_template;
        const at = ours.tokens.findIndex((t, i) => t !== theirs.tokens[i]);
        const first = at >= 0 ? at : ours.tokens.length === theirs.tokens.length ? -1 : Math.min(ours.tokens.length, theirs.tokens.length);
        if (first < 0) continue;
        const piece = async (id: number | undefined) =>
          id === undefined
            ? '(end)'
            : JSON.stringify(await engine.call('detokenize', { modelId, tokens: Int32Array.of(id), renderSpecial: true }));
        const from = Math.max(0, first - 6);
        const ourContext = await Promise.all(
          ours.tokens.slice(from, first + 4).map(async (id, i) => `${from + i}: ${id} ${await piece(id)}`),
        );
        const theirContext = theirs.tokens
          .slice(from, first + 4)
          .map((id, i) => `${from + i}: ${id} ${JSON.stringify(theirs.pieces[from + i])}`);
        assert.fail(
          `${path}, ${name}: the tokens differ first at ${first} (ours ${ours.tokens[first] ?? '(end)'} ${await piece(ours.tokens[first])}, ` +
            `llama.cpp's ${theirs.tokens[first] ?? '(end)'} ${JSON.stringify(theirs.pieces[first] ?? '(end)')}; ${ours.tokens.length} vs ${theirs.tokens.length} tokens)\n` +
            `ours:\n  ${ourContext.join('\n  ')}\nllama.cpp:\n  ${theirContext.join('\n  ')}\n` +
            `our text:       ${JSON.stringify(ours.text)}\nllama.cpp text: ${JSON.stringify(theirs.prompt)}`,
        );
      }
      return { explicit, ourTemplate: info.chatTemplate };
    } finally {
      await engine.call('disposeModel', { modelId });
    }
  }

  test('llama.cpp’s chat template tool is built', () => {
    assert.ok(!('missing' in tool), 'missing' in tool ? tool.missing : '');
  });

  test('the synthetic target (its own Phi-3-style template)', { skip: 'missing' in tool && tool.missing }, async () => {
    const { explicit } = await compare((await syntheticModels())['target.gguf']);
    assert.equal(explicit, true);
  });

  test('the three models on Qwen3.5’s vocabulary (its ChatML template)', { skip: 'missing' in tool && tool.missing }, async () => {
    for (const path of Object.values(await realVocabModels())) {
      const { explicit } = await compare(path);
      assert.equal(explicit, true, path);
    }
  });

  test(
    'Gemma 3 270M without a template: ChatML on both sides',
    { skip: ('missing' in tool && tool.missing) || realModelSkip() },
    async () => {
      const { explicit, ourTemplate } = await compare(REAL_MODEL);
      assert.equal(ourTemplate, null, 'the model carries no template of its own');
      assert.equal(explicit, false, 'llama.cpp fell back to its ChatML');
      assert.match(referencePrompt(REAL_MODEL, CONVERSATIONS['a system prompt and three turns']!).template, /<\|im_start\|>/);
    },
  );
});
