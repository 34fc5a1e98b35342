// Types of cpu-features.mjs (plain JavaScript: it runs while npm installs, before TypeScript does).
export interface CpuBackend {
  /** the CMake target: ggml-cpu for a native build, ggml-cpu-<level> for each variant */
  name: string;
  /** ggml's names of the x86 extensions the compiler targeted for it here */
  compiledFor: string[];
  /** the same as compiled on a Sapphire Rapids Xeon (with AMX) */
  onAmxXeon: string[];
}
export const NATIVE_ON_AMX_XEON: string[];
export function splitCommand(command: string): string[];
export function macroCommand(args: string[], options?: { onAmxXeon?: boolean }): string[];
export function featuresFromMacros(listing: string): string[];
export function putsWeightsInAmx(features: readonly string[]): boolean;
export function cpuBackendFeatures(buildDir: string): CpuBackend[] | null;
