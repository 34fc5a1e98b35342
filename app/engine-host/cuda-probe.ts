// Why a CUDA flavour has (or has no) CUDA device. ggml's release build loads backends
// silently: when libggml-cuda cannot load, the device list just lacks a GPU. The engine host
// asks the system loader itself (the addon's tryLoadLibrary: dlopen/LoadLibrary) for the
// backend and for each library it needs, so `--device cuda` can fail with the real reason.
// Pure apart from the injected loader, so the decision is unit-tested without a GPU.
import type { CudaStatus, DeviceInfo, RuntimeLibrary } from '../contract/engine-types.js';

export interface CudaProbeInput {
  platform: NodeJS.Platform;
  /** the flavour's folder, where libggml-cuda sits */
  addonDir: string;
  /** the CUDA major version the flavour was built against (13 for node-llama-cpp 3.21.1) */
  cudaMajor: number;
  devices: readonly DeviceInfo[];
  /** what ggml logged (warnings, errors) while it loaded the backends */
  loadLog: string;
  /** null when the library loads, else the loader's message */
  tryLoad: (pathOrName: string) => string | null;
}

/** The backend library's file name on this platform. */
export function cudaBackendFile(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'ggml-cuda.dll' : 'libggml-cuda.so';
}

/**
 * What libggml-cuda needs besides the C/C++ runtime, driver first. The Windows package's
 * ggml-cuda.dll carries the CUDA runtime linked in (it imports cublas64_13.dll alone; the runtime
 * loads nvcuda.dll when it starts), the Linux one links libcudart.so.13 and libcuda.so.1.
 */
export function cudaRuntimeLibraries(platform: NodeJS.Platform, major: number): { name: string; role: string }[] {
  if (platform === 'win32') {
    return [
      { name: 'nvcuda.dll', role: 'driver' },
      { name: `cublas64_${major}.dll`, role: 'cublas' },
      { name: `cublasLt64_${major}.dll`, role: 'cublas' },
    ];
  }
  return [
    { name: 'libcuda.so.1', role: 'driver' },
    { name: `libcudart.so.${major}`, role: 'runtime' },
    { name: `libcublas.so.${major}`, role: 'cublas' },
    { name: `libcublasLt.so.${major}`, role: 'cublas' },
  ];
}

function joinPath(dir: string, file: string, platform: NodeJS.Platform): string {
  return `${dir}${platform === 'win32' ? '\\' : '/'}${file}`;
}

/** Probes the CUDA backend of a flavour that carries one. */
export function probeCuda(input: CudaProbeInput): CudaStatus {
  const devices = input.devices.filter((d) => d.backend === 'CUDA').length;
  const libraries: RuntimeLibrary[] = cudaRuntimeLibraries(input.platform, input.cudaMajor).map((l) => ({
    ...l,
    error: input.tryLoad(l.name),
  }));
  const backendFile = cudaBackendFile(input.platform);
  const backendError = input.tryLoad(joinPath(input.addonDir, backendFile, input.platform));
  if (devices > 0) return { devices, reason: null, backendError, libraries };

  const missing = libraries.filter((l) => l.error !== null);
  // dlerror names the library, Windows' message does not
  const said = (l: RuntimeLibrary) => (l.error!.startsWith(l.name) ? l.error! : `${l.name}: ${l.error}`);
  const driver = missing.find((l) => l.role === 'driver');
  const others = missing.filter((l) => l.role !== 'driver').map((l) => l.name);
  let reason: string;
  if (driver) {
    reason = `no NVIDIA driver (${said(driver)})` + (others.length ? `; also missing: ${others.join(', ')}` : '');
  } else if (others.length) {
    reason =
      `the CUDA ${input.cudaMajor} libraries ${others.join(', ')} cannot be loaded (${said(missing[0]!)}); ` +
      (input.platform === 'win32'
        ? `install the CUDA ${input.cudaMajor} toolkit's cuBLAS or put the folder that holds them on PATH ` +
          '(Windows looks for them there, not beside ggml-cuda.dll)'
        : `install the CUDA ${input.cudaMajor} runtime and cuBLAS or put their folder on LD_LIBRARY_PATH`);
  } else if (backendError) {
    reason = `${backendFile} cannot be loaded: ${backendError}`;
  } else {
    // it loads, so ggml initialised it and found nothing; its log says why when it knows
    const said = input.loadLog.split('; ').find((l) => /cuda/i.test(l));
    reason = `the CUDA backend loads but reports no CUDA device${said ? ` (${said})` : ''}`;
  }
  return { devices, reason, backendError, libraries };
}
