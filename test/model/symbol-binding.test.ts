// Node's own binary exports the C++ library template code it instantiated, and Node 22's official
// build instantiated std::regex's compiler without exceptions. A library loaded into Node that
// calls its own copy of such a function through the PLT is bound to Node's instead: on Debian 13
// with Node 22, `power quantize` with a bad override pattern aborted the engine host at the
// std::regex_error the addon catches. The addon and the llama.cpp libraries are linked with
// -Bsymbolic-functions (docs/setup.md, Node.js); these tests check that each of them calls its
// own functions, and rebuild the Node 22 host with a preloaded library that aborts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { addonDir } from '../../app/engine/build-info.js';
import { ROOT } from '../../app/paths.js';

const elf = process.platform === 'linux';

function readelf(args: string[]): string {
  return execFileSync('readelf', ['-W', ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

/** the functions a library defines and exports (weak template copies among them) */
function definedFunctions(file: string): Set<string> {
  const names = new Set<string>();
  for (const line of readelf(['--dyn-syms', file]).split('\n')) {
    const f = line.trim().split(/\s+/);
    // Num: Value Size Type Bind Vis Ndx Name
    if (f.length >= 8 && f[3] === 'FUNC' && f[6] !== 'UND') names.add(f[7]!.replace(/@.*$/, ''));
  }
  return names;
}

/** the symbols the dynamic linker resolves for a library's calls and function addresses */
function boundAtLoad(file: string): Set<string> {
  const names = new Set<string>();
  for (const line of readelf(['--relocs', file]).split('\n')) {
    const f = line.trim().split(/\s+/);
    // Offset Info Type Symbol's-Value Symbol's-Name + Addend
    if (f.length >= 5 && /_(JUMP_SLOT|GLOB_DAT)$/.test(f[2]!)) names.add(f[4]!.replace(/@.*$/, ''));
  }
  return names;
}

describe('the engine host libraries call their own code', { skip: elf ? false : 'ELF symbol binding (Linux)' }, () => {
  const dir = addonDir('cpu');
  const libraries = readdirSync(dir).filter((f) => f === 'power.node' || /^lib.*\.so$/.test(f));

  test('no library of the cpu flavour leaves a function it defines to the process to resolve', () => {
    assert.ok(libraries.includes('power.node') && libraries.includes('libllama.so'), `libraries in ${dir}: ${libraries.join(', ')}`);
    for (const lib of libraries) {
      const file = join(dir, lib);
      const own = definedFunctions(file);
      const interposable = [...boundAtLoad(file)].filter((s) => own.has(s));
      assert.ok(own.size > 0, `${lib} exports no functions: readelf's format changed?`);
      assert.deepEqual(interposable.slice(0, 5), [], `${lib}: ${interposable.length} of its own functions are bound at load time`);
    }
  });

  describe('in a Node whose binary exports std::regex built without exceptions', () => {
    let scratch: string;
    let preload: string;
    before(() => {
      scratch = mkdtempSync(join(tmpdir(), 'power-symbols-'));
      // every std::regex compiler entry the addon has, exported by a library that aborts there,
      // as Node 22's binary does on a pattern it cannot compile
      const entries = [...definedFunctions(join(dir, 'power.node'))].filter((s) => /^_ZNSt8__detail9_Compiler/.test(s));
      assert.ok(entries.length > 0, 'power.node has no std::regex compiler of its own');
      const source = [
        '#include <cstdio>',
        '#include <cstdlib>',
        ...entries.map((name, i) => `extern "C" [[noreturn]] void entry${i}() __asm__("${name}");`),
        ...entries.map((_, i) => `void entry${i}() { std::fputs("the host's std::regex was called\\n", stderr); std::abort(); }`),
      ].join('\n');
      writeFileSync(join(scratch, 'host-regex.cpp'), source);
      preload = join(scratch, 'libhost-regex.so');
      execFileSync('g++', ['-shared', '-fPIC', '-o', preload, join(scratch, 'host-regex.cpp')]);
    });
    after(() => rmSync(scratch, { recursive: true, force: true }));

    test('a quantize pattern std::regex cannot compile is refused, not an abort', () => {
      const script = `
        import { loadBinding } from './app/engine-host/binding.ts';
        const { binding } = loadBinding('cpu');
        try {
          await binding.quantize({ input: 'missing.gguf', output: 'out.gguf', ftype: 7, pure: false, threads: 1,
            overrides: [{ pattern: '(', type: 'q4_0' }] });
          console.log('accepted');
        } catch (e) { console.log(e.message); }`;
      const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, LD_PRELOAD: preload },
      });
      assert.equal(run.status, 0, `exit ${run.status} ${run.signal ?? ''}\n${run.stderr}`);
      assert.match(run.stdout, /pattern '\(' is not a regular expression/);
    });
  });
});
