#!/usr/bin/env node
// `npm run lint`'s check that every path the code's comments and the docs cite exists, so that a
// file that moves or goes takes its citations with it. A cited path is a token with at least
// one folder and a file extension (`app/engine/client.ts`, `../bench/README.md`) in a comment of
// a source file or anywhere in a Markdown file. It holds when it names a file or folder relative
// to the repository's root, to the citing file's folder or one of its ancestors, or in the
// llama.cpp source the addon is built from (build/llama.cpp, when it has been cloned). Absolute
// paths, placeholders (OUT_DIR/…) and the folders our scripts and builds generate (dist/, build/,
// gpu-check/, …) are not citations: lint runs before the build, in a fresh clone too.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXT = 'ts|tsx|mjs|js|cjs|mts|cpp|h|md|sh|json|patch|yml|yaml|toml|txt|py|html|css';
const PATH = new RegExp(String.raw`(?<![\w./@~%-])((?:\.{1,2}/)*(?:[\w.-]+/)+[\w.-]+\.(?:${EXT}))(?![\w/])`, 'g');
const CODE = /\.(ts|tsx|mjs|js|cjs|mts|cpp|h)$/;
/** first segments that are not this repository's sources: build outputs (absent in a fresh clone), a toolkit's layout */
const NOT_OURS = new Set(['gpu-check', 'include', 'dist', 'build', '.cache', 'node_modules']);

/** The text a file's citations live in: comments for source files, all of a Markdown file. */
export function citingText(file, text) {
  if (file.endsWith('.md')) return text;
  if (file.endsWith('.sh'))
    return text
      .split('\n')
      .filter((l) => l.includes('#'))
      .map((l) => l.slice(l.indexOf('#')))
      .join('\n');
  if (!CODE.test(file)) return '';
  return comments(text);
}

/** The comments of C-like source: string literals ('…', "…", `…`) are stepped over, not read. */
function comments(text) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      out.push(text.slice(i, end < 0 ? text.length : end));
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      out.push(text.slice(i, end < 0 ? text.length : end + 2));
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < text.length && text[i] !== c && !(c !== '`' && text[i] === '\n')) i += text[i] === '\\' ? 2 : 1;
      i++;
    } else {
      i++;
    }
  }
  return out.join('\n');
}

/** The paths a text cites (URLs, absolute paths and placeholders left out). */
export function citedPaths(text) {
  const out = [];
  for (const m of text.matchAll(PATH)) {
    const p = m[1];
    const before = text.slice(Math.max(0, m.index - 12), m.index);
    if (/[:/]\/?$/.test(before) && /\w+:\/\/?$/.test(before)) continue; // part of a URL
    const first = p.replace(/^(\.{1,2}\/)+/, '').split('/')[0];
    if (/^[A-Z_]+$/.test(first) || NOT_OURS.has(first)) continue;
    out.push(p);
  }
  return out;
}

/** Whether a path cited from `file` exists (a `.js` citation may name its TypeScript source). */
export function resolves(root, file, path, llamaDir) {
  const bases = [root];
  for (let d = dirname(file); d !== '.' && d !== '/' && d !== ''; d = dirname(d)) bases.push(join(root, d));
  if (llamaDir) bases.push(llamaDir);
  const names = path.endsWith('.js')
    ? [path, path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.tsx'), path.replace(/\.js$/, '.mjs')]
    : [path];
  return bases.some((b) => names.some((n) => existsSync(normalize(join(b, n)))));
}

/** Every cited path of the tracked files that does not exist: `file: path` lines. */
export function brokenCitations(root) {
  const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const llamaDir = existsSync(join(root, 'build', 'llama.cpp', 'include', 'llama.h')) ? join(root, 'build', 'llama.cpp') : null;
  const broken = [];
  for (const file of files) {
    if (!file.endsWith('.md') && !file.endsWith('.sh') && !CODE.test(file)) continue;
    if (!existsSync(join(root, file))) continue;
    for (const path of citedPaths(citingText(file, readFileSync(join(root, file), 'utf8')))) {
      // without the llama.cpp clone, a path that is not under one of our folders cannot be judged
      const ours = existsSync(join(root, path.replace(/^(\.{1,2}\/)+/, '').split('/')[0]));
      if (!resolves(root, file, path, llamaDir) && (llamaDir || ours || path.startsWith('.'))) broken.push(`${file}: ${path}`);
    }
  }
  return broken;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const broken = brokenCitations(root);
  if (broken.length) {
    console.error(`cited paths that do not exist (fix the citation, or the path if it moved):\n  ${broken.join('\n  ')}`);
    process.exit(1);
  }
}
