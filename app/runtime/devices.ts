// What each built flavour of the addon loads and what --device auto / cuda / vulkan would use: the data
// behind `power devices` and engine.devices.
import type { DevicesReport } from '../contract/api/engine.js';
import { PowerError } from '../contract/api/errors.js';
import type { DeviceInfo } from '../contract/engine-types.js';
import { addonDir, readBuildInfo } from '../engine/build-info.js';
import { capabilityNumber, cudaDeviceClaim } from '../engine/cuda-invariance.js';
import { EngineClient } from '../engine/client.js';
import { describeDevice, NO_CUDA_FLAVOUR, NO_VULKAN_FLAVOUR, pickCudaDevice, pickVulkanDevice } from '../engine/device-select.js';
import { DeviceUnavailableError, selectionPlan } from '../engine/engine-on-device.js';
import { probeRpcServer, RpcUnavailableError } from '../engine/rpc.js';

type FlavourReport = DevicesReport['flavours'][number];

async function probeFlavour(flavour: string, gpu: string | null): Promise<FlavourReport> {
  const engine = EngineClient.start({ flavour });
  try {
    const hello = await engine.call('hello', {});
    const perDevice = readBuildInfo(flavour).flashAttnBatchInvariant === 'by-compute-capability';
    const batchInvariance = hello.devices
      .filter((d) => perDevice && d.backend === 'CUDA')
      .map((d) => ({ device: d.name, claim: cudaDeviceClaim(capabilityNumber(d.computeCapability)) }));
    return { flavour, dir: addonDir(flavour), gpu, devices: hello.devices, cuda: hello.cuda, ...(perDevice ? { batchInvariance } : {}) };
  } catch (error) {
    throw new PowerError('device', `the ${flavour} flavour of the addon does not start: ${(error as Error).message}`);
  } finally {
    await engine.close();
  }
}

/** The flavours this machine has built and how device selection orders them (a missing build is a device error). */
function builtFlavourPlan(): ReturnType<typeof selectionPlan> {
  try {
    return selectionPlan();
  } catch (error) {
    if (error instanceof DeviceUnavailableError) throw new PowerError('device', error.message);
    throw error;
  }
}

export async function devicesReport(): Promise<DevicesReport> {
  const { built, plan } = builtFlavourPlan();
  if (!plan.cpu) throw new PowerError('device', 'the native addon is not built: run npm install');
  const wanted = [...new Set([plan.cuda, plan.vulkan, plan.cpu].filter((f): f is string => f !== null))];
  const flavours: FlavourReport[] = [];
  for (const f of wanted) flavours.push(await probeFlavour(f, built.find((b) => b.flavour === f)?.gpu ?? null));

  const cudaReport = flavours.find((f) => f.flavour === plan.cuda) ?? null;
  const gpu = cudaReport ? pickCudaDevice(cudaReport.devices) : null;
  const cpuReport = flavours.find((f) => f.flavour === plan.cpu)!;
  const cpu = cpuReport.devices.find((d) => d.type === 'cpu');
  const whyNot = cudaReport ? (cudaReport.cuda?.reason ?? 'no CUDA device') : NO_CUDA_FLAVOUR;
  // the same rules as startEngineOn: auto takes a real Vulkan GPU only, --device vulkan any
  const vulkanReport = flavours.find((f) => f.flavour === plan.vulkan) ?? null;
  const vkGpu = vulkanReport ? pickVulkanDevice(vulkanReport.devices, false) : null;
  const vkAny = vulkanReport ? pickVulkanDevice(vulkanReport.devices, true) : null;
  const vkWhyNot = vulkanReport ? 'the Vulkan loader found no usable device' : NO_VULKAN_FLAVOUR;
  const why = [whyNot, ...(plan.vulkan ? [vkAny ? `no Vulkan GPU (${vkAny.name} runs on the CPU)` : vkWhyNot] : [])].join('; ');
  const auto = gpu
    ? `${describeDevice(gpu)} (flavour ${plan.cuda})`
    : vkGpu
      ? `${describeDevice(vkGpu)} (flavour ${plan.vulkan})`
      : `${cpu ? describeDevice(cpu) : 'cpu'} (flavour ${plan.cpu}): ${why}`;
  return {
    flavours,
    auto,
    cuda: { usable: gpu !== null, use: gpu ? gpu.name : null, reason: gpu ? null : whyNot },
    vulkan: { usable: vkAny !== null, use: vkAny ? vkAny.name : null, reason: vkAny ? null : vkWhyNot },
  };
}

/** One remote machine of `power devices --rpc`: its devices with their memory, or why it cannot be used. */
export interface RemoteReport {
  endpoint: string;
  devices: DeviceInfo[];
  error: string | null;
}

/**
 * The devices of remote machines (`power rpc` or llama.cpp's rpc-server), as an engine with
 * the RPC backend sees them: each endpoint probed, the reachable ones added. An endpoint that
 * cannot be used is reported with the reason, not thrown.
 */
export async function remoteDevicesReport(endpoints: readonly string[]): Promise<{ flavour: string; remote: RemoteReport[] }> {
  const { plan } = builtFlavourPlan();
  // the from-source flavours have the RPC backend; the batch-invariant cpu one first
  const candidates = [...new Set([plan.cpu, plan.cuda].filter((f): f is string => f !== null))];
  for (const flavour of candidates) {
    const engine = EngineClient.start({ flavour });
    try {
      const hello = await engine.call('hello', {});
      if (!hello.rpc) continue;
      const remote: RemoteReport[] = [];
      for (const endpoint of endpoints) {
        try {
          await probeRpcServer(endpoint);
        } catch (error) {
          if (!(error instanceof RpcUnavailableError)) throw error;
          remote.push({ endpoint, devices: [], error: error.message });
          continue;
        }
        const [added] = await engine.call('addRpcServers', { endpoints: [endpoint] });
        remote.push({ endpoint, devices: added?.devices ?? [], error: null });
      }
      return { flavour, remote };
    } catch (error) {
      throw new PowerError('device', `the ${flavour} flavour of the addon cannot list remote devices: ${(error as Error).message}`);
    } finally {
      await engine.close();
    }
  }
  throw new PowerError(
    'device',
    `no built flavour of the addon has the RPC backend (${candidates.join(', ')}); the llama.cpp builds from source have it`,
  );
}
