// The description `power serve` serves on /ws (and the renderer's client is built from): the
// service's concerns plus downloads.
import { downloads } from '../api/downloads.js';
import type { ApiOf } from '../api/describe.js';
import { powerApi } from '../api/index.js';

export const servedApi = { ...powerApi, downloads };
export type ServedApi = ApiOf<typeof servedApi>;
