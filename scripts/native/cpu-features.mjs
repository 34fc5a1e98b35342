// What the x86 CPU backends of a llama.cpp build were compiled for, asked of the compiler itself:
// each backend's own compile command (compile_commands.json) rerun with -dM -E, its predefined
// macros read. A native build has one backend (-march=native), an all-variants build one per
// feature level. Also asked: what the same command defines on a Xeon with AMX, where gcc's
// driver expands -march=native into -march=sapphirerapids and explicit -mamx-* flags, so a
// machine without AMX can tell whether an AMX machine's build would put weights in ggml's AMX
// buffer (ggml-cpu builds that buffer type when __AMX_INT8__ and __AVX512VNNI__ are defined).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The macros the compiler predefines for an x86 feature, in the names ggml's feature list uses. */
const FEATURE_MACROS = [
  ['SSE42', '__SSE4_2__'],
  ['AVX', '__AVX__'],
  ['F16C', '__F16C__'],
  ['FMA', '__FMA__'],
  ['AVX2', '__AVX2__'],
  ['BMI2', '__BMI2__'],
  ['AVX_VNNI', '__AVXVNNI__'],
  ['AVX512', '__AVX512F__'],
  ['AVX512_VBMI', '__AVX512VBMI__'],
  ['AVX512_VNNI', '__AVX512VNNI__'],
  ['AVX512_BF16', '__AVX512BF16__'],
  ['AMX_TILE', '__AMX_TILE__'],
  ['AMX_INT8', '__AMX_INT8__'],
  ['AMX_BF16', '__AMX_BF16__'],
];

/** What gcc's driver passes for -march=native on a Sapphire Rapids Xeon (the AMX part of it). */
export const NATIVE_ON_AMX_XEON = ['-march=sapphirerapids', '-mamx-tile', '-mamx-int8', '-mamx-bf16'];

/** A compile command line split into arguments (double and single quotes, backslash escapes). */
export function splitCommand(command) {
  const args = [];
  let cur = '';
  let quote = null;
  let any = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < command.length) cur += command[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      any = true;
    } else if (c === '\\' && i + 1 < command.length) {
      cur += command[++i];
      any = true;
    } else if (/\s/.test(c)) {
      if (any || cur) args.push(cur);
      cur = '';
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || cur) args.push(cur);
  return args;
}

/**
 * The compile command turned into a preprocessor run that prints the predefined macros: the
 * object output and -c dropped, -dM -E added. `onAmxXeon` replaces -march=native by what the
 * driver passes on an AMX Xeon (a variant's explicit flags do not depend on the machine).
 */
export function macroCommand(args, { onAmxXeon = false } = {}) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-o' || a === '-MF' || a === '-MT' || a === '-MQ') {
      i++;
      continue;
    }
    if (a === '-c' || a === '-MD' || a === '-MMD') continue;
    if (onAmxXeon && a === '-march=native') {
      out.push(...NATIVE_ON_AMX_XEON);
      continue;
    }
    out.push(a);
  }
  return [...out, '-dM', '-E'];
}

/** The ggml feature names whose macros a -dM -E listing defines. */
export function featuresFromMacros(listing) {
  const defined = new Set([...listing.matchAll(/^#define (\w+)/gm)].map((m) => m[1]));
  return FEATURE_MACROS.filter(([, macro]) => defined.has(macro)).map(([name]) => name);
}

/** ggml-cpu builds its AMX buffer type (and moves quantized weights into it) with both of these. */
export function putsWeightsInAmx(features) {
  return features.includes('AMX_INT8') && features.includes('AVX512_VNNI');
}

function runMacros(directory, argv) {
  const [compiler, ...rest] = argv;
  return execFileSync(compiler, rest, { cwd: directory, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 << 20 });
}

/**
 * The CPU backends of the build in `buildDir`: for each, its name (ggml-cpu, ggml-cpu-haswell,
 * ...), the features it was compiled for here, and those it would be compiled for on an AMX
 * Xeon. Null where there is nothing to ask (no compile_commands.json, a compiler without -dM -E
 * such as MSVC, a non-x86 build).
 */
export function cpuBackendFeatures(buildDir) {
  const file = join(buildDir, 'compile_commands.json');
  if (!existsSync(file)) return null;
  const entries = JSON.parse(readFileSync(file, 'utf8'));
  const backends = [];
  for (const e of entries) {
    // one translation unit per backend stands for all of them: they share the target's flags
    if (!/ggml-cpu[\\/]ggml-cpu\.c$/.test(e.file)) continue;
    const args = e.arguments ?? splitCommand(e.command);
    const target = args.find((a) => /CMakeFiles[\\/](ggml-cpu[\w.-]*)\.dir/.test(a));
    const name = target ? /CMakeFiles[\\/](ggml-cpu[\w.-]*)\.dir/.exec(target)[1] : 'ggml-cpu';
    if (/^(cl|clang-cl)(\.exe)?$/i.test(args[0].split(/[\\/]/).pop())) return null;
    const compiledFor = featuresFromMacros(runMacros(e.directory, macroCommand(args)));
    const onAmxXeon = args.includes('-march=native')
      ? featuresFromMacros(runMacros(e.directory, macroCommand(args, { onAmxXeon: true })))
      : compiledFor;
    backends.push({ name, compiledFor, onAmxXeon });
  }
  if (backends.length === 0) return null;
  return backends.sort((a, b) => a.name.localeCompare(b.name));
}
