// A speculative run that proposes nothing runs as its autoregressive control, so a test that
// only compares the two passes whether drafting works or not. This guard reads every test file:
// a test block that compares a run with a control (the digests of two runs, a speculative
// reply with the control's, contract.ts's assertSameAsControl) and names a speculative
// strategy must also assert that something was proposed: test/fixtures/drafting.ts's
// assertDrafted or assertDraftedSameAsControl, or an explicit `proposed > 0` (or acceptances above
// zero, which need proposals). A block where nothing can be proposed on purpose says why with a
// `drafting-guard: <reason>` comment. It reads text, not syntax: a block is a test(...) call found
// by its brackets, and a comparison an assertion of two digests or of a spec value and a control.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';

import { STRATEGIES } from '../../app/contract/strategies.js';
import { ROOT } from '../../app/paths.js';

/** where a test block starts: test(...) or it(...), with .only/.skip/.todo */
const BLOCK_START = /^[ \t]*(?:test|it)(?:\.(?:only|skip|todo))?\(/gm;
/** an assertion's arguments, up to the end of its statement */
const ASSERT_CALL = /\bassert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)\(([^;]*?)\)\s*;/gs;
/** the control the run is held against */
const CONTROL = /control|autoregressive|strategy: 'none'|'--strategy', 'none'|\bar\b/i;
/** a speculative strategy, a draft, or a configuration that carries one */
const SPECULATIVE = new RegExp(
  [
    ...STRATEGIES.filter((s) => s !== 'none').map((s) => `'${s}'`),
    String.raw`\bdraft(?:ModelId|Method)?\s*:`,
    `'--draft'`,
    // a configuration's strategy (not one checked to be 'none'), its draft, a run named spec
    String.raw`\b\w+\.strategy\b(?!\s*,\s*'none')`,
    String.raw`\b\w+\.draft\b`,
    String.raw`\bspec\b`,
  ].join('|'),
);
/** the proposal assertion: the helpers, or proposals (or acceptances, which need them) asserted above zero */
const PROVED = /\bassertDrafted(?:SameAsControl)?\(|\b(?:proposed|accepted)\b[^;\n]*?(?:>\s*\d|>=\s*[1-9])/;
const EXEMPT = /drafting-guard: \S/;

interface Unproved {
  line: number;
  comparison: string;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** The comparisons of a block with a control: contract.ts's helper, two digests, a spec value and a control. */
function comparisons(block: string): { index: number; text: string; full: string }[] {
  const out: { index: number; text: string; full: string }[] = [];
  for (const m of block.matchAll(/\bassertSameAsControl\(/g)) out.push({ index: m.index, text: m[0], full: m[0] });
  for (const m of block.matchAll(ASSERT_CALL)) {
    const args = m[1]!;
    const digests = args.match(/\.digest\b/g)?.length ?? 0;
    // two digests, or a speculative value held against the control's: (spec, control), (spec, ar)
    if (digests >= 2 || /^[^,]*\bspec\w*\b[^,]*,[^,]*\b(?:controls?|ar|want)\b/.test(args)) {
      out.push({ index: m.index, text: m[0].split('\n')[0]!, full: m[0] });
    }
  }
  return out.sort((a, b) => a.index - b.index);
}

/**
 * Where the call that opens at `open` (its '(') closes: brackets counted outside strings,
 * template text and comments (a template's ${...} counts as code). The text's end where it never does.
 */
function callEnd(text: string, open: number): number {
  const stack: string[] = []; // ')', ']', '}' awaited, or '`' for template text
  let i = open;
  while (i < text.length) {
    const c = text[i]!;
    if (stack.at(-1) === '`') {
      if (c === '\\') i++;
      else if (c === '`') stack.pop();
      else if (c === '$' && text[i + 1] === '{') {
        stack.push('}');
        i++;
      }
    } else if (c === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      if (i < 0) return text.length;
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 1;
      if (i <= 0) return text.length;
    } else if (c === '/' && /[(,=:[!&|?{};]\s*$|\breturn\s*$/.test(text.slice(Math.max(0, i - 12), i))) {
      // a regular expression literal: brackets and quotes in it are its own
      let inClass = false;
      for (i++; i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/'); i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
      }
    } else if (c === "'" || c === '"') {
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
    } else if (c === '`') stack.push('`');
    else if (c === '(') stack.push(')');
    else if (c === '[') stack.push(']');
    else if (c === '{') stack.push('}');
    else if (c === ')' || c === ']' || c === '}') {
      stack.pop();
      if (stack.length === 0) return i + 1;
    }
    i++;
  }
  return text.length;
}

/** The test blocks of `text` that compare a speculative run with a control and assert no proposal. */
function unprovedComparisons(text: string): Unproved[] {
  const out: Unproved[] = [];
  for (const m of text.matchAll(BLOCK_START)) {
    const start = m.index;
    const block = text.slice(start, callEnd(text, start + m[0].length - 1));
    const found = comparisons(block);
    if (found.length === 0 || !SPECULATIVE.test(block)) continue;
    // against a control, or a comparison whose own text runs a speculative strategy
    if (!CONTROL.test(block) && !found.some((f) => SPECULATIVE.test(f.full))) continue;
    if (PROVED.test(block) || EXEMPT.test(block)) continue;
    out.push({ line: lineOf(text, start + found[0]!.index), comparison: found[0]!.text.trim() });
  }
  return out;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('drafting guard: a comparison with the control proves that the speculative side drafted', () => {
  test('flags a speculative run compared with its control and nothing else, in a block of its own', () => {
    // drafting-guard: these snippets are the comparisons the guard must flag
    const unproved = [
      "test('ngram equals the control', async () => {",
      "  const ar = await ask({ strategy: 'none' });",
      "  const spec = await ask({ strategy: 'ngram', k: 4 });",
      '  assert.equal(spec.power.digest, ar.power.digest);',
      '});',
      "test('a draft model equals the control', async () => {",
      "  const control = await ask({ strategy: 'none' });",
      "  const spec = await ask({ draft: 'draft-close', k: 4 });",
      '  assert.deepEqual(',
      '    shape(spec),',
      '    shape(control),',
      '  );',
      '});',
      "test('the matrix', async () => {",
      '  const runs = await runAll(c, sampling);',
      "  for (const [i, run] of runs.entries()) assertSameAsControl(run, controlRuns[i]!, 'prompt');",
      "  if (c.draft === 'draft-same.gguf') assert.equal(accepted, proposed);",
      '});',
      "test('a grammar under prompt lookup', () => {",
      "  const words = generate([...base, '--grammar', grammar]);",
      '  assert.match(words.text, /^[a-z (]+$/);',
      "  assert.equal(generate([...base, '--strategy', 'ngram']).digest, words.digest);",
      '});',
    ].join('\n');
    assert.deepEqual(unprovedComparisons(unproved), [
      { line: 4, comparison: 'assert.equal(spec.power.digest, ar.power.digest);' },
      { line: 9, comparison: 'assert.deepEqual(' },
      { line: 16, comparison: 'assertSameAsControl(' },
      { line: 22, comparison: "assert.equal(generate([...base, '--strategy', 'ngram']).digest, words.digest);" },
    ]);
  });

  test('passes a comparison with a proposal assertion, one with no speculative strategy in its block, and an exempted one', () => {
    const proved = [
      "test('ngram equals the control', async () => {",
      "  const spec = await ask({ strategy: 'ngram', k: 4 });",
      "  assertDraftedSameAsControl(spec, control, { label: 'ngram' });",
      '});',
      "test('mtp equals the control', async () => {",
      "  const mtp = generate('--strategy', 'mtp', '--k', '3');",
      '  assert.equal(mtp.digest, control.digest);',
      "  assert.ok(mtp.stats.proposed > 0, 'the head proposed');",
      '});',
      "test('the same tokens on two devices', async () => {",
      "  const cpu = generate('--device', 'cpu', '--strategy', 'none');",
      '  assert.equal(auto.digest, cpu.digest);',
      '});',
      "test('a grammar that leaves nothing to propose', async () => {",
      "  // drafting-guard: the grammar's first token is forced, so ngram-simple finds no match",
      "  assert.equal(generate('--strategy', 'ngram-simple').digest, control.digest);",
      '});',
      "test('a chat reuses its prefix', async () => {",
      '  assert.equal(reply.digest, second.end.digest);',
      "  assert.equal(reply.strategy, 'none');",
      '});',
      "const cases = [{ strategy: 'ngram', control: true }];",
    ].join('\n');
    assert.deepEqual(unprovedComparisons(proved), []);
  });

  test('every speculative comparison with a control under test/ asserts that it drafted', () => {
    const dir = join(ROOT, 'test');
    const found: string[] = [];
    for (const path of testFiles(dir).sort()) {
      for (const u of unprovedComparisons(readFileSync(path, 'utf8'))) {
        found.push(`${relative(ROOT, path)}:${u.line}: ${u.comparison}`);
      }
    }
    assert.deepEqual(
      found,
      [],
      `these compare a speculative run with its control but never assert that it proposed anything ` +
        `(use assertDraftedSameAsControl or assertDrafted of test/fixtures/drafting.ts):\n${found.join('\n')}`,
    );
  });
});
