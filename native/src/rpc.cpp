#include "rpc.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "background_job.h"
#include "cpu_threads.h"
#include "guard.h"
#include "js_options.h"
#include "log_capture.h"

namespace power {

namespace {

// ggml-rpc.h's entry points, by the names its registry exports them under
using add_server_fn   = ggml_backend_reg_t (*)(const char * endpoint);
using start_server_fn = void (*)(const char * endpoint, const char * cache_dir, size_t n_threads, size_t n_devices,
                                 ggml_backend_dev_t * devices);

ggml_backend_reg_t rpc_registry() {
    return ggml_backend_reg_by_name("RPC");
}

template <typename F> F rpc_proc(const char * name) {
    ggml_backend_reg_t reg = rpc_registry();
    return reg ? reinterpret_cast<F>(ggml_backend_reg_get_proc_address(reg, name)) : nullptr;
}

const char * NO_RPC = "this flavour's llama.cpp has no RPC backend (the from-source builds enable GGML_RPC: "
                      "npm run build:native -- --flavour cpu)";

// rpc_proc for an entry point that cannot work without it: a flavour with no RPC backend is a JS error
template <typename F> F required_rpc_proc(Napi::Env env, const char * name) {
    F proc = rpc_proc<F>(name);
    if (!proc) {
        throw Napi::Error::New(env, NO_RPC);
    }
    return proc;
}

struct memory_figures {
    size_t free_bytes  = 0;
    size_t total_bytes = 0;
};

// what each remote device reported when it was added; touched on the JS thread only
std::map<ggml_backend_dev_t, memory_figures> & remote_memory() {
    static std::map<ggml_backend_dev_t, memory_figures> figures;
    return figures;
}

bool registered(ggml_backend_reg_t reg) {
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        if (ggml_backend_reg_get(i) == reg) {
            return true;
        }
    }
    return false;
}

struct added_server {
    std::string endpoint;
    ggml_backend_reg_t reg = nullptr;
    std::vector<ggml_backend_dev_t> devices;
    std::vector<memory_figures> memory;
};

// addRpcServer(endpoint) -> Promise<[{ name, description, type, backend, freeBytes, totalBytes }]>
Napi::Value add_rpc_server(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        throw Napi::TypeError::New(env, "addRpcServer(endpoint): endpoint must be a string 'host:port'");
    }
    auto add         = required_rpc_proc<add_server_fn>(env, "ggml_backend_rpc_add_server");
    auto server      = std::make_shared<added_server>();
    server->endpoint = info[0].As<Napi::String>().Utf8Value();
    if (server->endpoint.find(':') == std::string::npos) {
        throw Napi::TypeError::New(env, "addRpcServer(endpoint): endpoint must be 'host:port' (got '" + server->endpoint + "')");
    }
    // connecting and asking for the device count and memory are network round trips: off the JS thread
    return background_job::start(env, "power.addRpcServer", [server, add](background_job & job) {
        uint64_t mark = log_capture_mark();
        server->reg   = add(server->endpoint.c_str());
        if (!server->reg) {
            std::string why = log_capture_problems_since(mark);
            job.reject("the RPC server at " + server->endpoint + " serves no device" + (why.empty() ? "" : ": " + why));
            return;
        }
        for (size_t i = 0; i < ggml_backend_reg_dev_count(server->reg); i++) {
            ggml_backend_dev_t dev = ggml_backend_reg_dev_get(server->reg, i);
            memory_figures m;
            ggml_backend_dev_memory(dev, &m.free_bytes, &m.total_bytes);
            server->devices.push_back(dev);
            server->memory.push_back(m);
        }
        job.resolve([server](Napi::Env env) -> Napi::Value {
            // the registry is read by every device lookup: it changes on the JS thread only
            if (!registered(server->reg)) {
                ggml_backend_register(server->reg);
            }
            Napi::Array out = Napi::Array::New(env, server->devices.size());
            for (size_t i = 0; i < server->devices.size(); i++) {
                ggml_backend_dev_t dev = server->devices[i];
                remote_memory()[dev]   = server->memory[i];
                Napi::Object d         = Napi::Object::New(env);
                d.Set("name", ggml_backend_dev_name(dev));
                d.Set("description", ggml_backend_dev_description(dev));
                d.Set("type", device_type_name(ggml_backend_dev_type(dev)));
                d.Set("backend", ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)));
                d.Set("freeBytes", static_cast<double>(server->memory[i].free_bytes));
                d.Set("totalBytes", static_cast<double>(server->memory[i].total_bytes));
                out.Set(static_cast<uint32_t>(i), d);
            }
            return out;
        });
    });
}

struct serve_request {
    std::string endpoint;
    std::vector<ggml_backend_dev_t> devices;
    size_t threads = 1;
};

// the devices llama.cpp's rpc-server serves by default: every local accelerator, else the CPU
std::vector<ggml_backend_dev_t> default_served_devices() {
    std::vector<ggml_backend_dev_t> out;
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU && !is_remote_device(dev)) {
            out.push_back(dev);
        }
    }
    if (out.empty()) {
        if (ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU)) {
            out.push_back(cpu);
        }
    }
    return out;
}

// rpcServe({ endpoint, devices?: string[], threads?: number }) -> Promise (rejected when the server stops)
Napi::Value rpc_serve(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
        throw Napi::TypeError::New(env, "rpcServe({ endpoint, devices, threads })");
    }
    auto start                          = required_rpc_proc<start_server_fn>(env, "ggml_backend_rpc_start_server");
    Napi::Object opts                   = info[0].As<Napi::Object>();
    auto req                            = std::make_shared<serve_request>();
    std::optional<std::string> endpoint = string_option(opts, "endpoint");
    if (!endpoint) {
        throw Napi::TypeError::New(env, "rpcServe: endpoint must be a string 'host:port'");
    }
    req->endpoint = *endpoint;
    if (std::optional<Napi::Array> names = array_option(opts, "devices")) {
        for (const std::string & name : string_list(*names, "devices")) {
            ggml_backend_dev_t dev = ggml_backend_dev_by_name(name.c_str());
            if (!dev) {
                throw Napi::Error::New(env, "no device named '" + name + "' is loaded");
            }
            if (is_remote_device(dev)) {
                throw Napi::Error::New(env, "'" + name + "' is a remote device: a server serves its own machine's devices");
            }
            req->devices.push_back(dev);
        }
    }
    if (req->devices.empty()) {
        req->devices = default_served_devices();
    }
    if (req->devices.empty()) {
        throw Napi::Error::New(env, "no device to serve");
    }
    const int64_t threads = integer_option(opts, "threads", 0, 0, 1024);
    req->threads          = static_cast<size_t>(threads > 0 ? threads : default_thread_count());
    // ggml_backend_rpc_start_server accepts one client after another until the process ends; it
    // returns only when it cannot start (a bad endpoint, a port it cannot bind)
    return background_job::start(env, "power.rpcServe", [req, start](background_job & job) {
        uint64_t mark = log_capture_mark();
        start(req->endpoint.c_str(), nullptr, req->threads, req->devices.size(), req->devices.data());
        std::string why = log_capture_problems_since(mark);
        job.reject("the RPC server at " + req->endpoint + " stopped (it could not listen there)" + (why.empty() ? "" : ": " + why));
    });
}

Napi::Value rpc_available(const Napi::CallbackInfo & info) {
    return Napi::Boolean::New(info.Env(), rpc_proc<add_server_fn>("ggml_backend_rpc_add_server") != nullptr &&
                                              rpc_proc<start_server_fn>("ggml_backend_rpc_start_server") != nullptr);
}

} // namespace

const char * device_type_name(enum ggml_backend_dev_type type) {
    switch (type) {
    case GGML_BACKEND_DEVICE_TYPE_CPU:
        return "cpu";
    case GGML_BACKEND_DEVICE_TYPE_GPU:
        return "gpu";
    case GGML_BACKEND_DEVICE_TYPE_IGPU:
        return "igpu";
    case GGML_BACKEND_DEVICE_TYPE_ACCEL:
        return "accel";
    default:
        return "other";
    }
}

bool is_remote_device(ggml_backend_dev_t dev) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    return reg != nullptr && std::strcmp(ggml_backend_reg_name(reg), "RPC") == 0;
}

void device_memory(ggml_backend_dev_t dev, size_t * free_bytes, size_t * total_bytes) {
    if (is_remote_device(dev)) {
        auto it      = remote_memory().find(dev);
        *free_bytes  = it == remote_memory().end() ? 0 : it->second.free_bytes;
        *total_bytes = it == remote_memory().end() ? 0 : it->second.total_bytes;
        return;
    }
    ggml_backend_dev_memory(dev, free_bytes, total_bytes);
}

void rpc_init(Napi::Env env, Napi::Object exports) {
    exports.Set("addRpcServer", Napi::Function::New(env, guarded_fn<add_rpc_server>, "addRpcServer"));
    exports.Set("rpcServe", Napi::Function::New(env, guarded_fn<rpc_serve>, "rpcServe"));
    exports.Set("rpcAvailable", Napi::Function::New(env, guarded_fn<rpc_available>, "rpcAvailable"));
}

} // namespace power
