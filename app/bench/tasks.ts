// Loads a benchmark task set: a built-in one by name (bench/tasks/<name>.jsonl) or the user's
// own JSONL file.
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

import { parseTasks, type BenchTask } from '../report/tasks.js';
import { ROOT } from '../paths.js';

export const BUILTIN_TASK_SETS = ['calibration', 'matrix'] as const;

export const TASKS_DIR = join(ROOT, 'bench', 'tasks');

export interface TaskSet {
  /** the built-in set's name, or the file's name */
  name: string;
  tasks: BenchTask[];
}

export class TaskSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskSetError';
  }
}

/** `calibration`, `matrix`, or a path to a JSONL file; throws TaskFileError / TaskSetError. */
export async function loadTaskSet(nameOrPath: string): Promise<TaskSet> {
  const builtin = (BUILTIN_TASK_SETS as readonly string[]).includes(nameOrPath);
  const path = builtin ? join(TASKS_DIR, `${nameOrPath}.jsonl`) : nameOrPath;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (code ?? 'unreadable');
    throw new TaskSetError(`cannot read the task file ${path} (${why}); --tasks takes ${BUILTIN_TASK_SETS.join(', ')} or a JSONL file`);
  }
  return { name: builtin ? nameOrPath : basename(path), tasks: parseTasks(text, path) };
}
