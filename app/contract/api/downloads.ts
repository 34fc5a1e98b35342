// downloads: GGUF files fetched from a URL into the library folder, with progress, resume after
// an interruption (start the same download again), size and SHA-256 checks, and cancel; plus the
// built-in list of recommended target + draft pairs. A finished download is added to the library.
import { z } from 'zod';

import { RecommendedPair } from '../recommended-models.js';
import { concern } from './describe.js';
import { Id, None } from './common.js';

export const DOWNLOAD_ERROR_CODES = [
  'bad-input',
  'exists',
  'http',
  'network',
  'not-gguf',
  'size-mismatch',
  'sha256-mismatch',
  'disk-full',
  'io',
  'cancelled',
  'library',
] as const;

export const FileName = z
  .string()
  .min(6)
  .max(255)
  .regex(/^[^/\\\0:*?"<>|]+\.gguf$/i, { error: 'a file name ending in .gguf, without folders' })
  .refine((n) => !n.startsWith('.'), { error: 'the file name must not start with a dot' });

export const DownloadEntry = z.object({
  id: Id,
  url: z.string(),
  fileName: z.string(),
  /** where the file lands (the partial is this path + .part) */
  path: z.string(),
  state: z.enum(['running', 'done', 'failed', 'cancelled']),
  receivedBytes: z.number().int().min(0),
  totalBytes: z.number().int().min(0).nullable(),
  /** bytes kept from an interrupted attempt */
  resumedFromBytes: z.number().int().min(0),
  error: z
    .object({
      code: z.enum(DOWNLOAD_ERROR_CODES),
      message: z.string(),
      /** the partial file is kept: starting the same download again resumes it */
      resumable: z.boolean(),
    })
    .nullable(),
  sha256: z.string().nullable(),
  /** the library entry, once added */
  modelId: Id.nullable(),
  startedAt: z.string(),
});
export type DownloadEntry = z.infer<typeof DownloadEntry>;

export const downloads = concern({
  methods: {
    recommended: { input: None, output: z.object({ pairs: z.array(RecommendedPair) }) },
    /** starts (or resumes) a download and returns at once; progress comes as onChanged events */
    start: {
      input: z.object({
        url: z.url({ protocol: /^https?$/ }),
        /** absent: the URL's last path segment */
        fileName: FileName.optional(),
        sha256: z
          .string()
          .regex(/^[0-9a-fA-F]{64}$/)
          .optional(),
        sizeBytes: z.number().int().positive().optional(),
      }),
      output: DownloadEntry,
    },
    list: { input: None, output: z.object({ downloads: z.array(DownloadEntry) }) },
    /** stops a running download and removes its partial file */
    cancel: { input: z.object({ downloadId: Id }), output: DownloadEntry },
  },
  events: {
    /** progress (a few times a second) and every change of state */
    onChanged: DownloadEntry,
  },
});
