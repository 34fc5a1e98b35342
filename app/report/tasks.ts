// Benchmark task files: JSONL, one task per line,
//   {"id": "coding-01", "category": "coding", "prompt": "Write ...", "maxTokens": 256}
// Blank lines and lines starting with // are skipped. Ids are unique.
import { z } from 'zod';

export const BenchTask = z
  .object({
    id: z.string().regex(/^[\w.-]{1,64}$/, 'id: 1-64 letters, digits, _ . or -'),
    category: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'category: lower-case letters, digits and -'),
    prompt: z.string().min(1, 'prompt: must not be empty'),
    /** the task's own token budget; --max-tokens overrides it */
    maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();
export type BenchTask = z.infer<typeof BenchTask>;

export class TaskFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskFileError';
  }
}

/** Parses a task file's text; the error names the line and what is wrong with it. */
export function parseTasks(text: string, source: string): BenchTask[] {
  const tasks: BenchTask[] = [];
  const ids = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('//')) return;
    const where = `${source} line ${i + 1}`;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch (error) {
      throw new TaskFileError(`${where} is not JSON: ${(error as Error).message}`);
    }
    const checked = BenchTask.safeParse(data);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const field = issue.path.length ? `${issue.path.join('.')}: ` : '';
      const message = issue.message.startsWith(field) ? issue.message : `${field}${issue.message}`;
      throw new TaskFileError(`${where}: ${message}`);
    }
    if (ids.has(checked.data.id)) throw new TaskFileError(`${where}: task id '${checked.data.id}' appears twice`);
    ids.add(checked.data.id);
    tasks.push(checked.data);
  });
  if (tasks.length === 0) throw new TaskFileError(`${source} holds no task (one JSON object per line)`);
  return tasks;
}
