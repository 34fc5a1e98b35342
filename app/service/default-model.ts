// The model a front door offers at start (`power serve --default-model FILE`; `npm start` and
// scripts/up.sh with the real model installed), so that a first message gets a reply without a
// visit to the Models dialog: the file joins the library, and is loaded when nothing else was
// chosen — a data folder without a last load (or whose last load names a model no longer in the
// library), or whose last load was this file, then with those settings. A last load of another
// model leaves the engine as every start leaves it: unloaded.
import { resolve } from 'node:path';

import { LoadOptions } from '../contract/api/engine.js';
import type { ModelLibrary } from './library.js';
import type { SettingsFile } from './settings.js';
import type { ServiceImplementation } from './types.js';

/** Returns what it did, in words for the front door's log; throws where the file or its load fails. */
export async function offerDefaultModel(
  path: string,
  deps: { library: ModelLibrary; settings: SettingsFile; engine: ServiceImplementation['engine'] },
): Promise<string> {
  const { library, settings, engine } = deps;
  const file = resolve(path);
  const entry = library.list().find((e) => e.path === file) ?? (await library.add(file)).added[0]!;
  const last = settings.data.lastLoad;
  const chosen = last !== null && library.list().some((e) => e.id === last.modelId) ? last : null;
  if (chosen && chosen.modelId !== entry.id) return `${entry.name} is in the library; not loaded, since the last load was another model`;
  // ngram drafts from the conversation itself: speculative from the first reply, with no draft model
  const options = chosen ?? LoadOptions.parse({ modelId: entry.id, draftMethod: { strategy: 'ngram' } });
  await engine.load(options);
  return `${entry.name} loaded (${[options.draftMethod.strategy, ...options.draftMethod.fallbacks].join(',')})`;
}
