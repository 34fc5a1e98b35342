// Types of llama-source-facts.mjs (plain JavaScript: it runs while npm installs).
export function knownArchitectures(srcDir: string): string[];
export function layerInputArchitectures(srcDir: string): string[];
