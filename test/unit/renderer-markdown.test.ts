// Model output is untrusted: the reply's Markdown reaches the DOM with no raw HTML of its own.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { Markdown } from '../../renderer/src/components/Markdown.js';
import { TokenOrigins } from '../../renderer/src/components/TokenOrigins.js';
import { renderMarkdown } from '../../renderer/src/logic/markdown.js';

const render = (source: string): string => renderToStaticMarkup(createElement(Markdown, { source }));

describe('reply Markdown', () => {
  test('Markdown with code blocks renders', () => {
    const html = render('# Title\n\nSome **bold** and `code`.\n\n```ts\nconst x = 1 < 2;\n```\n');
    assert.match(html, /<h1>Title<\/h1>/);
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<pre><code class="language-ts">const x = 1 &lt; 2;\n<\/code><\/pre>/);
  });
  test('raw HTML in a reply is escaped: no element of its own reaches the DOM', () => {
    const attacks = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      'text <iframe src="https://example.com"></iframe> text',
      '<div onclick="alert(1)">click</div>',
      '<svg onload=alert(1)>',
    ];
    for (const attack of attacks) {
      const html = render(attack);
      assert.doesNotMatch(html, /<(script|img|iframe|svg)\b/i, attack);
      assert.doesNotMatch(html, /<div onclick/i, attack);
      assert.match(html, /&lt;(script|img|iframe|div|svg)/, attack);
    }
  });
  test('script URLs in links are refused and links open outside the app', () => {
    const html = renderMarkdown('[a](javascript:alert(1)) [b](data:text/html;base64,PHNjcmlwdD4=) [c](https://example.com)');
    assert.doesNotMatch(html, /href="javascript:/i);
    assert.doesNotMatch(html, /href="data:/i);
    assert.match(html, /<a href="https:\/\/example.com" target="_blank" rel="noopener noreferrer nofollow">c<\/a>/);
  });
});

describe('token origins', () => {
  test('each token is a span coloured by its origin with its round; its text is escaped', () => {
    const html = renderToStaticMarkup(
      createElement(TokenOrigins, {
        tokens: [
          { id: 1, text: '<b>', origin: 'accepted', round: 2 },
          { id: 2, text: 'x', origin: 'correction', round: 2 },
        ],
      }),
    );
    assert.match(html, /<span class="tok tok-accepted" data-round="2" title="round 2: accepted proposal">&lt;b&gt;<\/span>/);
    assert.match(html, /tok-correction/);
  });
});
