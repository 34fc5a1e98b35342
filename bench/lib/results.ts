// The bench/RESULTS*.md files the scripts write their sections into, and how each kind of
// section goes in: appended, between markers, or as the head or the tail of a file.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../../app/paths.js';

export const RESULTS_MD = join(ROOT, 'bench', 'RESULTS.md');
export const RESULTS_CPU_MD = join(ROOT, 'bench', 'RESULTS-cpu.md');
export const RESULTS_EXACT_MD = join(ROOT, 'bench', 'RESULTS-exact.md');
export const RESULTS_REAL_MD = join(ROOT, 'bench', 'RESULTS-real.md');
export const RESULTS_DRAFTING_MD = join(ROOT, 'bench', 'RESULTS-drafting.md');

/** The headings of the sections appended to RESULTS-cpu.md (flash-attn.ts, serve-stream.ts), which speculative.ts's rewrite of its head keeps. */
export const FLASH_ATTN_HEADING = '## Flash Attention on the CPU';
export const SERVE_STREAM_HEADING = '## A long reply through /v1';

/** How to rerun a bench script, as a RESULTS file quotes it: `node --import tsx bench/<script>.ts <args>`. */
export function benchCommand(script: string, args: readonly string[] = []): string {
  return ['node --import tsx', `bench/${script}.ts`, ...args].join(' ');
}

function read(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

/** Adds a section at the end of the file. */
export function appendSection(file: string, md: string): void {
  appendFileSync(file, md);
}

/** Replaces what lies between `begin` and `end` (markers included), or adds it at the end; a new file starts with `newFile`. */
export function writeBetweenMarkers(file: string, begin: string, end: string, md: string, newFile: string): void {
  const current = read(file) ?? newFile;
  const a = current.indexOf(begin);
  const b = current.indexOf(end);
  writeFileSync(file, a >= 0 && b > a ? current.slice(0, a) + md + current.slice(b + end.length) : `${current.trimEnd()}\n\n${md}\n`);
}

/** Replaces the file's head, keeping everything from the first of the `kept` headings on (the sections others append). */
export function writeHead(file: string, md: string, kept: readonly string[]): void {
  const previous = read(file) ?? '';
  const from = Math.min(...kept.map((h) => previous.indexOf(`\n${h}`)).filter((i) => i >= 0));
  writeFileSync(file, Number.isFinite(from) ? `${md.trimEnd()}\n${previous.slice(from)}` : md);
}

/** Replaces the file from `heading` on (or adds the section at the end), keeping what comes before; a new file starts with `newFile`. */
export function writeTail(file: string, heading: string, md: string, newFile: string): void {
  const previous = read(file);
  const head = previous !== null ? previous.split(`\n${heading}`)[0]!.trimEnd() + '\n\n' : newFile;
  writeFileSync(file, head + md);
}
