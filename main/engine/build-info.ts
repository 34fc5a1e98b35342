// What `npm install` built: the addon folder of each flavour and its build-info.json (llama.cpp
// release, the architectures it loads). Reading it does not load the native binding.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../paths.js';

export interface BuildInfo {
  flavour: string;
  platform: string;
  llamaCppRelease: string;
  architectures: string[];
}

/** The folder of a built addon flavour (power.node, its libraries, build-info.json). */
export function addonDir(flavour = 'cpu'): string {
  return join(ROOT, 'build', `addon-${flavour}`);
}

export function readBuildInfo(flavour = 'cpu'): BuildInfo {
  const file = join(addonDir(flavour), 'build-info.json');
  if (!existsSync(file)) {
    throw new Error(`the native addon is not built (${file} is missing): run npm install`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as BuildInfo;
}
