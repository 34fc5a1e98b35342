// Reads `ldd` output and judges it for an addon folder (pure; scripts/check-cuda-link.ts runs it).
// A dependency must resolve, and our own libraries (llama/ggml) must resolve inside the folder
// itself (self-contained, not from node_modules or a build tree). The NVIDIA driver and the
// CUDA runtime libraries are the exceptions: build machines have neither, so their absence is
// reported, not failed.

export interface LddEntry {
  name: string;
  /** where it resolved; null: not found */
  path: string | null;
}

/** Parses `ldd FILE` output (the vdso and the loader itself carry no "=>" and are skipped). */
export function parseLdd(output: string): LddEntry[] {
  const entries: LddEntry[] = [];
  for (const line of output.split('\n')) {
    const m = /^\s*(\S+)\s+=>\s+(not found|\S+)/.exec(line);
    if (!m) continue;
    entries.push({ name: m[1]!, path: m[2] === 'not found' ? null : m[2]! });
  }
  return entries;
}

/** Driver and CUDA runtime libraries: absent on build machines, reported only. */
export function isCudaSystemLibrary(name: string): boolean {
  return /^(libcuda\.so\.1|libcudart\.so\.\d+|libcublas\.so\.\d+|libcublasLt\.so\.\d+)$/.test(name);
}

/** Our own libraries, which must come from the addon folder. */
function isOurs(name: string): boolean {
  return /^lib(llama|ggml)[-.\w]*\.so/.test(name);
}

export interface FileVerdict {
  file: string;
  /** failures: unresolved or resolved outside the folder */
  problems: string[];
  /** CUDA system libraries, resolved or not */
  cuda: LddEntry[];
}

export function judge(file: string, folder: string, entries: readonly LddEntry[]): FileVerdict {
  const problems: string[] = [];
  const cuda: LddEntry[] = [];
  const inFolder = (p: string) => p.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
  for (const e of entries) {
    if (isCudaSystemLibrary(e.name)) {
      cuda.push(e);
    } else if (e.path === null) {
      problems.push(`${e.name} => not found`);
    } else if (isOurs(e.name) && !inFolder(e.path)) {
      problems.push(`${e.name} => ${e.path} (outside ${folder}: the folder is not self-contained)`);
    }
  }
  return { file, problems, cuda };
}
