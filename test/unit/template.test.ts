// Chat templates render with the model's own Jinja, as Hugging Face's apply_chat_template does.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChatTemplateError, renderChat } from '../../app/chat/template.js';
import { CHAT_TEMPLATE } from '../../app/models/vocab.js';

test("the synthetic models' template wraps one user message and opens the assistant turn", () => {
  const out = renderChat(CHAT_TEMPLATE, [{ role: 'user', content: 'hello' }], { bos: '<s>', eos: '</s>' });
  assert.equal(out, '<|user|>\nhello<|end|>\n<|assistant|>\n');
});

test('a ChatML-style template with bos_token renders', () => {
  const tmpl =
    '{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}';
  const out = renderChat(
    tmpl,
    [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
    { bos: '<s>', eos: '</s>' },
  );
  assert.equal(out, '<s><|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
});

test('a broken template is a ChatTemplateError', () => {
  assert.throws(() => renderChat('{% for m in messages %}', [{ role: 'user', content: 'x' }], { bos: '', eos: '' }), ChatTemplateError);
});
