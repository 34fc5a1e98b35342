// The lint rule that enforces the layering of docs/architecture.md reports "Bad layering" for each forbidden import.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ESLint } from 'eslint';

import { ROOT } from '../../node/paths.js';

const eslint = new ESLint({ cwd: ROOT });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering rule', () => {
  const cases: [string, string, boolean][] = [
    ['contract/x.ts', "import { readFile } from 'node:fs';", true],
    ['contract/x.ts', "import { ROOT } from '../node/paths.js';", true],
    ['contract/x.ts', "import { EngineRequest } from '../engine/protocol.js';", true],
    ['contract/x.ts', "import { z } from 'zod';", false],
    ['renderer/x.ts', "import { ipcRenderer } from 'electron';", true],
    ['renderer/x.ts', "import { join } from 'node:path';", true],
    ['renderer/x.ts', "import { STRATEGIES } from '../contract/strategies.js';", false],
    ['renderer/src/components/x.tsx', "import { ROOT } from '../../../node/paths.js';", true],
    ['renderer/src/components/x.tsx', "import { syntheticModels } from '../../../test/fixtures/models.js';", true],
    ['renderer/src/components/x.tsx', "import { writeGguf } from '../../../tools/gguf/writer.js';", true],
    ['renderer/src/components/x.tsx', "import { powerApi } from '../../../contract/api/index.js';", false],
    ['node/cli/x.ts', "import { app } from 'electron';", true],
    ['node/cli/x.ts', "import { loadBinding } from '../../engine/binding.js';", true],
    ['node/cli/x.ts', "import { makeModels } from '../../tools/models/synthetic.js';", true],
    ['node/cli/make-models.ts', "import { makeModels } from '../../tools/models/synthetic.js';", false],
    ['node/cli/x.ts', "import { STRATEGIES } from '../../contract/strategies.js';", false],
    ['node/cli/x.ts', "import { engineMethods } from '../../engine/protocol.js';", false],
    ['node/service/x.ts', "import { serve } from '../serve/server.js';", true],
    ['node/runtime/x.ts', "import { createPowerService } from '../service/service.js';", true],
    ['node/engine/x.ts', "import { openTarget } from '../runtime/target.js';", true],
    ['engine/host.ts', "import { loadBinding } from './binding.js';", false],
    ['engine/x.ts', "import { loadBinding } from './binding.js';", true],
    ['engine/x.ts', "import { ROOT } from '../node/paths.js';", false],
    ['engine/x.ts', "import { EngineClient } from '../node/engine/client.js';", true],
    ['electron/window.ts', "import { app } from 'electron';", false],
    ['electron/x.ts', "import { loadBinding } from '../engine/binding.js';", true],
    ['electron/ipc/x.ts', "import { ipcMain } from 'electron';", true],
  ];
  for (const [file, code, forbidden] of cases) {
    test(`${file}: ${code} is ${forbidden ? 'reported' : 'allowed'}`, async () => {
      const errors = await layeringErrors(file, `${code}\nexport const used = 1;\n`);
      if (forbidden) assert.match(errors.join('\n'), /Bad layering/);
      else assert.deepEqual(errors, []);
    });
  }
});
