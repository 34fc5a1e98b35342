// Types of check-cited-paths.mjs (plain JavaScript, run by npm run lint).
export function citingText(file: string, text: string): string;
export function citedPaths(text: string): string[];
export function resolves(root: string, file: string, path: string, llamaDir: string | null): boolean;
export function brokenCitations(root: string): string[];
