// What one summation order costs, weight type by weight type: the CPU matrix product of a
// decode (1 row) and of verify passes (2 to 65 rows) through Power's patched kernels against the
// released ones, timed by `power-kernel-rows --time` built against each (build/addon-cpu and
// build/addon-cpu-prebuilt, both of this llama.cpp release). The two binaries run one after the
// other, the order alternating per round; each figure is the median of a binary's repetitions
// and each ratio the median over rounds of released time / Power time (above 1: Power is the
// faster), so the machine's drift cancels inside a round.
//
//   node --import tsx bench/kernel-tax.ts [--types f16,q4_K,...|all] [--threads 1,2] [--rounds 3] [--reps 9]
//                                          [--widths 1,2,4,8,16,32,65] [--shape 4096x2048] [--clock wall|cpu]
//                                          [--level native|avx2] [--released-backend LIB] [--write]
//
// --shape ROWSxCOLS is the weight matrix (4096x2048 unless given; 262144x640 is Gemma 3's output
// head). --released-backend times the released side on one CPU backend library of the prebuilt
// (e.g. build/addon-cpu-prebuilt/libggml-cpu-haswell.so, the AVX2 level) instead of the best
// one for this CPU. --level avx2 compares the two at the AVX2 level (a Haswell-class CPU, on this
// one): Power's patched ggml-cpu built for it as a loadable backend into build/kernel-avx2 (once;
// a few minutes), against the prebuilt's haswell library, both through the prebuilt's tool.
// --clock cpu times the process's CPU time instead of the wall clock's: on one
// thread, a figure a busy machine's preemptions do not inflate (a development aid; the table of
// record is wall time on an idle machine). --write appends the table to bench/RESULTS-cpu.md.
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';

import { addonDir, readBuildInfo } from '../app/engine/build-info.js';
import { ROOT } from '../app/paths.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { buildLlamaTools, LLAMA_SRC } from './lib/llama.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { appendSection, benchCommand, RESULTS_CPU_MD } from './lib/results.js';
import { failer, run } from './lib/run.js';
import { medianRatio } from './lib/stats.js';

const values = benchOptions(
  {
    types: 'all',
    threads: '1,2',
    rounds: '3',
    reps: '9',
    widths: '1,2,4,8,16,32,65',
    shape: '4096x2048',
    clock: 'wall',
    level: 'native',
    'released-backend': '',
  },
  ['write'],
);
const fail = failer('kernel-tax');
const { rounds, reps } = positiveIntegers(values, ['rounds', 'reps'], fail);
const threads = values.threads.split(',').map(Number);
const widths = values.widths.split(',').map(Number);
const shape = /^(\d+)x(\d+)$/.exec(values.shape);
if (!shape) fail('--shape must be ROWSxCOLS, e.g. 4096x2048');
if (threads.some((t) => !Number.isInteger(t) || t < 1)) fail('--threads must be positive integers');
if (values.clock !== 'wall' && values.clock !== 'cpu') fail('--clock must be wall or cpu');
if (widths.some((w) => !Number.isInteger(w) || w < 1 || w > 512)) fail('--widths must be integers from 1 to 512');

const SIDES = ['power', 'released'] as const;
type Side = (typeof SIDES)[number];
if (values.level !== 'native' && values.level !== 'avx2') fail('--level must be native or avx2');
const avx2 = values.level === 'avx2';
const tools: Record<Side, string> = {
  // at the AVX2 level both sides load their backend into the prebuilt's tool
  power: join(addonDir(avx2 ? 'cpu-prebuilt' : 'cpu'), 'power-kernel-rows'),
  released: join(addonDir('cpu-prebuilt'), 'power-kernel-rows'),
};
for (const side of SIDES) if (!existsSync(tools[side])) fail(`${tools[side]} is missing: npm run build:native`);
const backends: Record<Side, string> = {
  power: avx2 ? powerAvx2Backend() : '',
  released: values['released-backend'] || (avx2 ? join(addonDir('cpu-prebuilt'), 'libggml-cpu-haswell.so') : ''),
};
for (const side of SIDES) if (backends[side] && !existsSync(backends[side])) fail(`${backends[side]} is missing`);

/** Power's patched ggml-cpu (the source the cpu flavour built) for the AVX2 level, as a backend the prebuilt's ggml loads. */
function powerAvx2Backend(): string {
  const build = join(ROOT, 'build', 'kernel-avx2');
  const lib = join(build, 'bin', 'libggml-cpu.so');
  // the cpu flavour's own cmake options (llamafile, repack, no AMX, no OpenMP), then the level's
  const built = (readBuildInfo('cpu') as unknown as { llamaCmakeOptions?: Record<string, string> }).llamaCmakeOptions;
  if (!built) fail('build/addon-cpu/build-info.json names no llamaCmakeOptions: npm run build:native');
  buildLlamaTools(
    {
      src: LLAMA_SRC,
      build,
      targets: ['ggml-cpu'],
      defs: {
        ...built,
        BUILD_SHARED_LIBS: 'ON',
        GGML_BACKEND_DL: 'ON',
        GGML_NATIVE: 'OFF',
        GGML_CPU_ALL_VARIANTS: 'OFF',
        ...Object.fromEntries(['AVX', 'AVX2', 'FMA', 'F16C', 'BMI2'].map((f) => [`GGML_${f}`, 'ON'])),
        GGML_AVX512: 'OFF',
      },
    },
    fail,
  );
  return lib;
}

/** microseconds by `type|buffer|width` */
type Times = Map<string, number>;

interface Timing {
  times: Times;
  /** the `# cpu backend:` line: the features the timed kernels were compiled for */
  features: string;
  buffers: Map<string, string>;
}

async function time(side: Side, t: number): Promise<Timing> {
  const args = ['--time', '--threads', String(t), '--reps', String(reps), '--widths', widths.join(','), '--rows', shape![1]!];
  args.push('--cols', shape![2]!, '--clock', values.clock);
  if (values.types !== 'all') args.push('--types', values.types);
  if (backends[side]) args.push('--backend', backends[side]);
  const r = await run(tools[side], args, { timeoutMs: 3_600_000 });
  if (r.code !== 0) fail(`${tools[side]} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  const out: Timing = { times: new Map(), features: '', buffers: new Map() };
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('# cpu backend:')) out.features = line.slice('# cpu backend:'.length).trim();
    const m = /^(\S+) (plain|repacked) \d+x\d+ width (\d+): ([\d.]+) us$/.exec(line);
    if (!m) continue;
    out.times.set(`${m[1]}|${m[3]}`, Number(m[4]));
    out.buffers.set(m[1]!, m[2]!);
  }
  if (out.times.size === 0) fail(`${tools[side]} timed nothing: ${r.stdout.slice(0, 400)}`);
  return out;
}

interface Round {
  threads: number;
  timing: Record<Side, Timing>;
}

const loadBefore = load1();
const results: Round[] = [];
for (let round = 0; round < rounds; round++) {
  for (const t of threads) {
    const order: Side[] = round % 2 === 0 ? ['power', 'released'] : ['released', 'power'];
    const timing = {} as Record<Side, Timing>;
    for (const side of order) timing[side] = await time(side, t);
    results.push({ threads: t, timing });
    console.error(`kernel-tax: round ${round + 1}/${rounds}, ${t} thread(s) done`);
  }
}

const first = results[0]!.timing;
const types = [...first.power.buffers.keys()];
const fmt = (r: number | null): string => (r === null ? '–' : `${r.toFixed(2)}×`);
const us = (v: number | undefined): string => (v === undefined ? '–' : v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(0)} µs`);

/** released / Power for a type and width at a thread count: the median over rounds */
function ratio(type: string, width: number, t: number): number | null {
  return medianRatio(
    results
      .filter((r) => r.threads === t)
      .map((r) => [r.timing.released.times.get(`${type}|${width}`), r.timing.power.times.get(`${type}|${width}`)]),
  );
}

const lines: string[] = [];
lines.push(`## What one summation order costs, per weight type (bench/kernel-tax.ts, ${isoSeconds()})`, '');
lines.push(
  `\`${benchCommand(
    'kernel-tax',
    process.argv.slice(2).filter((a) => a !== '--write'),
  )}\``,
  '',
);
lines.push(
  `${machineLine()}; load ${loadBefore.toFixed(2)} before, ${load1().toFixed(2)} after. A ${shape![1]} × ${shape![2]} weight matrix times 1 row (a decode) and 2–65 rows (verify passes), ` +
    `${rounds} rounds of ${reps} timed products per binary (${values.clock === 'cpu' ? 'process CPU time' : 'wall time'}). Power's kernels: ${first.power.features}. ` +
    `Released (${backends.released ? basename(backends.released) : 'the best variant for this CPU'}): ${first.released.features}.`,
  '',
  'Each cell is released time / Power time, the median over rounds (above 1×: Power is the faster); the decode columns also give both times.',
  '',
);
for (const t of threads) {
  lines.push(`**${t} thread${t > 1 ? 's' : ''}**`, '');
  const head = ['type', 'buffer', 'decode Power', 'decode released', ...widths.map((w) => (w === 1 ? '1 row' : `${w} rows`))];
  lines.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  const mine = results.filter((r) => r.threads === t);
  for (const type of types) {
    const med = (side: Side): number | undefined => {
      const v = mine.map((r) => r.timing[side].times.get(`${type}|1`)).filter((x): x is number => x !== undefined);
      return v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
    };
    const [pb, rb] = [first.power.buffers.get(type), first.released.buffers.get(type)];
    const buffer = pb === rb ? (pb ?? '–') : `${pb ?? '–'} (released: ${rb ?? '–'})`;
    const cells = [type, buffer, us(med('power')), us(med('released')), ...widths.map((w) => fmt(ratio(type, w, t)))];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('');
}
const md = lines.join('\n');
console.log(md);
if (values.write) appendSection(RESULTS_CPU_MD, `\n${md}`);
