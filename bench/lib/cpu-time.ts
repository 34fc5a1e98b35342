// The CPU time of a process, from Linux's /proc: every thread of it, or its main thread only
// (a Node process's JavaScript thread; an engine host's generation threads are others).
import { readdirSync, readFileSync } from 'node:fs';

/** CPU time of every thread of a process, in seconds (Linux's schedstat: nanoseconds). */
export function cpuSeconds(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e9;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): [0] is the state. */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU ms of a process's main thread (utime + stime, in 10 ms ticks); null when it cannot be read. */
export function mainThreadCpuMs(pid: number): number | null {
  try {
    const fields = statFields(`/proc/${pid}/task/${pid}/stat`);
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** A child of this process whose command line contains `text`; null when none (or not Linux). */
export function childPid(text: string): number | null {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      if (Number(statFields(`/proc/${entry}/stat`)[1]) === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text))
        return Number(entry);
    }
  } catch {
    // not Linux, or the process went away
  }
  return null;
}
