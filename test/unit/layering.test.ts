// The lint rule that enforces the layering of docs/architecture.md reports "Bad layering" for each forbidden import.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ESLint } from 'eslint';

import { ROOT } from '../../main/paths.js';

const eslint = new ESLint({ cwd: ROOT });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering rule', () => {
  const cases: [string, string, boolean][] = [
    ['app/x.ts', "import { readFile } from 'node:fs';", true],
    ['app/x.ts', "import { ROOT } from '../main/paths.js';", true],
    ['app/x.ts', "import { z } from 'zod';", false],
    ['renderer/x.ts', "import { ipcRenderer } from 'electron';", true],
    ['renderer/x.ts', "import { join } from 'node:path';", true],
    ['renderer/x.ts', "import { STRATEGIES } from '../app/strategies.js';", false],
    ['renderer/src/components/x.tsx', "import { ROOT } from '../../../main/paths.js';", true],
    ['renderer/src/components/x.tsx', "import { syntheticModels } from '../../../test/fixtures/models.js';", true],
    ['renderer/src/components/x.tsx', "import { powerApi } from '../../../app/api/index.js';", false],
    ['main/cli/x.ts', "import { app } from 'electron';", true],
    ['main/cli/x.ts', "import { loadBinding } from '../engine/binding.js';", true],
    ['main/cli/x.ts', "import { STRATEGIES } from '../../app/strategies.js';", false],
    ['main/engine/host.ts', "import { loadBinding } from './binding.js';", false],
    ['main/shell/window.ts', "import { app } from 'electron';", false],
  ];
  for (const [file, code, forbidden] of cases) {
    test(`${file}: ${code} is ${forbidden ? 'reported' : 'allowed'}`, async () => {
      const errors = await layeringErrors(file, `${code}\nexport const used = 1;\n`);
      if (forbidden) assert.match(errors.join('\n'), /Bad layering/);
      else assert.deepEqual(errors, []);
    });
  }
});
