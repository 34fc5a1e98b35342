#pragma once
// llama.cpp's RPC backend (ggml-rpc), both ways:
//   addRpcServer(endpoint) -> Promise<DeviceInfo[]>: the devices a `power rpc` (or llama.cpp's
//     rpc-server) at host:port serves, registered as this process's devices (RPC0, RPC1, ...), so
//     that Model.load can name them in `devices` and split a model over them;
//   rpcServe({ endpoint, devices, threads }) -> Promise: serves this machine's devices at
//     host:port (ggml_backend_rpc_start_server, blocking, on a thread of its own); the promise
//     only settles (rejected) when the server stops, which it does only when it cannot listen;
//   rpcAvailable() -> bool: whether this flavour's llama.cpp was built with GGML_RPC.
// The RPC functions are looked up through the registry (ggml_backend_reg_get_proc_address), as
// llama.cpp's own tools do, so a flavour without the backend links and says so.
// ggml-rpc aborts the process when a server it uses goes away (RPC_STATUS_ASSERT): the engine
// host dies of it and the front door reports the crash; the Node side probes every endpoint
// before it is added (app/engine/rpc.ts), so an unreachable one is refused without an abort.

#include <napi.h>

#include "ggml-backend.h"

namespace power {

void rpc_init(Napi::Env env, Napi::Object exports);

// a device's type as the binding reports it (cpu, gpu, igpu, accel, other)
const char * device_type_name(enum ggml_backend_dev_type type);

// whether `dev` is a remote device (registered by addRpcServer)
bool is_remote_device(ggml_backend_dev_t dev);

// a device's free/total memory; a remote device reports what it had when it was added (asking
// it again is a network round trip, and an abort when its server is gone)
void device_memory(ggml_backend_dev_t dev, size_t * free_bytes, size_t * total_bytes);

} // namespace power
