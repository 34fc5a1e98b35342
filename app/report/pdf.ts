// PDF from the HTML report, printed by a headless Chromium (Debian's /usr/bin/chromium; on
// Windows and macOS the Edge or Chrome every such machine has; or the one POWER_CHROMIUM
// names). The flags keep it off the network: the page is self-contained and
// its Content-Security-Policy forbids loading anything, and Chromium's own background traffic
// (updates, sync, field trials) is switched off.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { pathToFileURL } from 'node:url';

const LINUX = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** Where a Chromium-based browser that prints headless is installed on this kind of system. */
export function chromiumCandidates(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string[] {
  if (platform === 'win32') {
    // Edge ships with Windows 10 and 11; Chrome and Chromium where the user installed them
    const roots = [env['ProgramFiles(x86)'], env.ProgramFiles, env.LOCALAPPDATA].filter((r): r is string => !!r);
    return [
      ...roots.map((r) => win32.join(r, 'Microsoft', 'Edge', 'Application', 'msedge.exe')),
      ...roots.map((r) => win32.join(r, 'Google', 'Chrome', 'Application', 'chrome.exe')),
      ...roots.map((r) => win32.join(r, 'Chromium', 'Application', 'chrome.exe')),
    ];
  }
  if (platform === 'darwin') {
    return ['Google Chrome', 'Chromium', 'Microsoft Edge'].map((app) => `/Applications/${app}.app/Contents/MacOS/${app}`);
  }
  return LINUX;
}

function installAdvice(platform: NodeJS.Platform): string {
  if (platform === 'win32') return 'install Microsoft Edge or Google Chrome';
  if (platform === 'darwin') return 'install Google Chrome, Chromium or Microsoft Edge';
  return 'install it (Debian/Ubuntu: apt-get install chromium)';
}

export class ChromiumError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChromiumError';
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium to print with, or a ChromiumError that says how to get one; `alternative` is
 * the way around it that the caller offers (the CLI: leave pdf out of --formats).
 */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  alternative = 'leave pdf out of --formats',
  platform: NodeJS.Platform = process.platform,
): string {
  const pinned = env.POWER_CHROMIUM;
  if (pinned) {
    if (executable(pinned)) return pinned;
    throw new ChromiumError(`POWER_CHROMIUM=${pinned} is not an executable file`);
  }
  const candidates = chromiumCandidates(platform, env);
  const found = candidates.find(executable);
  if (found) return found;
  throw new ChromiumError(
    `the PDF is printed by a headless Chromium and none was found (looked for ${candidates.join(', ')}); ` +
      `${installAdvice(platform)}, point POWER_CHROMIUM at one, or ${alternative}`,
  );
}

/**
 * Flags for a Chromium that must not touch the network (see /usr/bin/chromium --help), bar
 * headless mode and the profile: a launch adds those (Playwright adds them itself).
 */
export const OFFLINE_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--metrics-recording-only',
  '--no-default-browser-check',
];

/** OFFLINE_FLAGS for a headless Chromium of our own with its profile in `profileDir`. */
export function offlineFlags(profileDir: string): string[] {
  return ['--headless', ...OFFLINE_FLAGS, `--user-data-dir=${profileDir}`];
}

/** Prints `htmlPath` to `pdfPath`; throws a ChromiumError with Chromium's last words on failure. */
export async function printPdf(htmlPath: string, pdfPath: string, options: { chromium?: string; timeoutMs?: number } = {}): Promise<void> {
  const chromium = options.chromium ?? findChromium();
  const profile = await mkdtemp(join(tmpdir(), 'power-pdf-'));
  try {
    await rm(pdfPath, { force: true });
    const args = [...offlineFlags(profile), '--no-pdf-header-footer', `--print-to-pdf=${pdfPath}`, pathToFileURL(htmlPath).href];
    const stderr: string[] = [];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (s: string) => stderr.push(s));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new ChromiumError(`cannot start ${chromium}: ${error.message}`));
      });
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const size = await stat(pdfPath).then(
      (s) => s.size,
      () => 0,
    );
    const head = size > 0 ? (await readFile(pdfPath)).subarray(0, 5).toString('latin1') : '';
    if (code !== 0 || head !== '%PDF-') {
      const said = stderr
        .join('')
        .split('\n')
        .filter((l) => l.trim())
        .slice(-3)
        .join(' | ');
      throw new ChromiumError(`${chromium} did not print the PDF (exit ${code})${said ? `: ${said}` : ''}`);
    }
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
