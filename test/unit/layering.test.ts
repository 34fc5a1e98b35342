// The lint rule that enforces the layering of docs/architecture.md reports "Bad layering" for each forbidden import.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ESLint } from 'eslint';

import { ROOT } from '../../app/paths.js';

const eslint = new ESLint({ cwd: ROOT });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering rule', () => {
  const cases: [string, string, boolean][] = [
    ['app/contract/x.ts', "import { readFile } from 'node:fs';", true],
    ['app/contract/x.ts', "import { ROOT } from '../paths.js';", true],
    ['app/contract/x.ts', "import { EngineRequest } from '../engine/protocol.js';", true],
    ['app/contract/api/x.ts', "import { ROOT } from '../../paths.js';", true],
    ['app/contract/api/x.ts', "import { Report } from '../report/schema.js';", false],
    ['app/contract/x.ts', "import { z } from 'zod';", false],
    ['renderer/x.ts', "import { ipcRenderer } from 'electron';", true],
    ['renderer/x.ts', "import { join } from 'node:path';", true],
    ['renderer/x.ts', "import { STRATEGIES } from '../app/contract/strategies.js';", false],
    ['renderer/src/components/x.tsx', "import { ROOT } from '../../../app/paths.js';", true],
    ['renderer/src/components/x.tsx', "import { openTarget } from '../../../app/runtime/target.js';", true],
    ['renderer/src/components/x.tsx', "import { syntheticModels } from '../../../test/fixtures/models.js';", true],
    ['renderer/src/components/x.tsx', "import { writeGguf } from '../../../tools/gguf/writer.js';", true],
    ['renderer/src/components/x.tsx', "import { powerApi } from '../../../app/contract/api/index.js';", false],
    ['app/cli/x.ts', "import { app } from 'electron';", true],
    ['app/cli/x.ts', "import { loadBinding } from '../engine-host/binding.js';", true],
    ['app/cli/x.ts', "import { makeModels } from '../../tools/models/synthetic.js';", true],
    ['app/cli/x.ts', "import { createWindow } from '../../main/window.js';", true],
    ['app/cli/make-models.ts', "import { makeModels } from '../../tools/models/synthetic.js';", false],
    ['app/cli/x.ts', "import { STRATEGIES } from '../contract/strategies.js';", false],
    ['app/cli/x.ts', "import { engineMethods } from '../engine/protocol.js';", false],
    ['app/service/x.ts', "import { serve } from '../serve/server.js';", true],
    ['app/runtime/x.ts', "import { createPowerService } from '../service/service.js';", true],
    ['app/engine/x.ts', "import { openTarget } from '../runtime/target.js';", true],
    ['app/engine-host/host.ts', "import { loadBinding } from './binding.js';", false],
    ['app/engine-host/x.ts', "import { loadBinding } from './binding.js';", true],
    ['app/engine-host/x.ts', "import { ROOT } from '../paths.js';", false],
    ['app/engine-host/x.ts', "import { engineMethods } from '../engine/protocol.js';", false],
    ['app/engine-host/x.ts', "import { EngineClient } from '../engine/client.js';", true],
    ['app/engine-host/host.ts', "import { openTarget } from '../runtime/target.js';", true],
    ['main/window.ts', "import { app } from 'electron';", false],
    ['main/x.ts', "import { loadBinding } from '../app/engine-host/binding.js';", true],
    ['main/x.ts', "import { PARENT_GONE } from '../app/engine-host/host-channel.js';", false],
    ['main/ipc/x.ts', "import { ipcMain } from 'electron';", true],
  ];
  for (const [file, code, forbidden] of cases) {
    test(`${file}: ${code} is ${forbidden ? 'reported' : 'allowed'}`, async () => {
      const errors = await layeringErrors(file, `${code}\nexport const used = 1;\n`);
      if (forbidden) assert.match(errors.join('\n'), /Bad layering/);
      else assert.deepEqual(errors, []);
    });
  }
});
