// The window's size and position, kept in the data folder (window.json) so the app reopens
// where the user left it. A saved rectangle that no longer shows on any display (a monitor was
// unplugged) is dropped for the default size, centred by the OS; a corrupt file is ignored.
import { readFile } from 'node:fs/promises';

import { z } from 'zod';

import { writeFileAtomic } from '../../app/service/storage/atomic-file.js';

export const WindowState = z.object({
  x: z.number().int(),
  y: z.number().int(),
  width: z.number().int().min(200).max(100_000),
  height: z.number().int().min(150).max(100_000),
  maximized: z.boolean().default(false),
});
export type WindowState = z.infer<typeof WindowState>;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const DEFAULT_SIZE = { width: 1280, height: 860 } as const;
export const MIN_SIZE = { width: 720, height: 480 } as const;
/** how much of the window must lie on a display to be put back where it was */
const MIN_VISIBLE = 64;

export async function loadWindowState(file: string): Promise<WindowState | null> {
  try {
    const parsed = WindowState.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function saveWindowState(file: string, state: WindowState): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(WindowState.parse(state), null, 2)}\n`);
}

function overlap(a: Rect, b: Rect): { width: number; height: number } {
  return {
    width: Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x),
    height: Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y),
  };
}

/** The bounds to open with: the saved ones when they still show on a display, else the default size. */
export function restoredBounds(
  saved: WindowState | null,
  workAreas: Rect[],
): { bounds: Partial<Rect> & { width: number; height: number }; maximized: boolean } {
  if (!saved) return { bounds: { ...DEFAULT_SIZE }, maximized: false };
  const visible = workAreas.some((area) => {
    const o = overlap(saved, area);
    return o.width >= MIN_VISIBLE && o.height >= MIN_VISIBLE;
  });
  if (!visible)
    return {
      bounds: { width: Math.max(MIN_SIZE.width, saved.width), height: Math.max(MIN_SIZE.height, saved.height) },
      maximized: saved.maximized,
    };
  return { bounds: { x: saved.x, y: saved.y, width: saved.width, height: saved.height }, maximized: saved.maximized };
}
