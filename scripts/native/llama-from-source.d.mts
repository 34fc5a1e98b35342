// Types of the part of llama-from-source.mjs (plain JavaScript: it runs while npm installs) that the tests use.
export function llamaCmakeDefs(options: { cuda: boolean; cudaArchs: string | undefined; cpuVariants: 'native' | 'all' }): Record<string, string>;
