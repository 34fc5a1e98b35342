// Module entry: backend loading, device listing, live-handle counters, and the wrapped
// classes (Model, Session). Every exported function turns failures into JS errors.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <napi.h>
#if defined(_MSC_VER)
#include <intrin.h>
#endif

#include "addon_data.h"
#include "guard.h"
#include "dynlib.h"
#include "ggml-backend.h"
#include "handles.h"
#include "log_capture.h"
#include "model.h"
#include "quantize.h"
#include "rpc.h"
#include "session.h"

namespace power {

addon_data & data_of(Napi::Env env) {
    return *env.GetInstanceData<addon_data>();
}

namespace {

// ggml aborts the process on a broken invariant (GGML_ABORT, GGML_ASSERT; ggml-rpc when a server
// it uses goes away). Its default prints the message and then a backtrace that pushes the message
// out of the few last lines a front door reports; this prints one line the front door can quote.
// With POWER_LLAMA_LOG set, ggml's default (with the backtrace) stays.
void abort_in_one_line(const char * message) {
    std::fprintf(stderr, "llama.cpp aborted: %s\n", message);
    std::fflush(stderr);
}

std::once_flag backends_once;
std::string backends_log; // warnings and errors logged while the backends loaded (set once)

// init(libDir) -> { loadLog }: loads the ggml backends that sit next to the addon (the prebuilt
// packages use dynamic backends: plain ggml_backend_load_all() would find no device).
// Idempotent. loadLog holds what ggml reported while loading (e.g. why CUDA found no device).
Napi::Value init(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        throw Napi::TypeError::New(env, "init(libDir): libDir must be a string");
    }
    std::string dir = info[0].As<Napi::String>().Utf8Value();
    std::call_once(backends_once, [&dir]() {
        log_capture_install();
        const char * verbose = std::getenv("POWER_LLAMA_LOG");
        if (verbose == nullptr || *verbose == '\0' || std::strcmp(verbose, "0") == 0) {
            ggml_set_abort_callback(abort_in_one_line);
        }
        // the Vulkan backend (our patch) registers CPU-type devices too: Power lists them and runs
        // on one only when asked (--device vulkan without a real GPU); `auto` never picks one
#ifdef _WIN32
        if (std::getenv("GGML_VK_CPU_DEVICES") == nullptr) {
            _putenv_s("GGML_VK_CPU_DEVICES", "1");
        }
#else
        setenv("GGML_VK_CPU_DEVICES", "1", 0);
#endif
        uint64_t mark = log_capture_mark();
        llama_backend_init();
        ggml_backend_load_all_from_path(dir.c_str());
        backends_log = log_capture_problems_since(mark);
    });
    if (ggml_backend_dev_count() == 0) {
        throw Napi::Error::New(env, "no ggml backend could be loaded from " + dir);
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("loadLog", backends_log);
    return out;
}

// The features a device's backend was compiled for (ggml_backend_get_features: for the CPU the
// x86 or ARM extensions of the variant that loaded), "NAME" for a flag, "NAME=value" otherwise.
Napi::Array backend_features(Napi::Env env, ggml_backend_reg_t reg) {
    Napi::Array out = Napi::Array::New(env);
    auto get        = reinterpret_cast<ggml_backend_get_features_t>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"));
    if (get == nullptr) {
        return out;
    }
    uint32_t n = 0;
    for (ggml_backend_feature * f = get(reg); f != nullptr && f->name != nullptr; f++) {
        std::string value = f->value != nullptr ? f->value : "";
        out.Set(n++, value == "1" ? std::string(f->name) : std::string(f->name) + "=" + value);
    }
    return out;
}

// The extra buffer types a device offers for weights (the CPU's repacked or AMX layouts): a
// model's weights may be moved into them at load, and each brings its own matmul kernels.
Napi::Array extra_buffer_types(Napi::Env env, ggml_backend_dev_t dev) {
    Napi::Array out        = Napi::Array::New(env);
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    auto get =
        reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts"));
    if (get == nullptr) {
        return out;
    }
    uint32_t n = 0;
    for (ggml_backend_buffer_type_t * b = get(dev); b != nullptr && *b != nullptr; b++) {
        out.Set(n++, ggml_backend_buft_name(*b));
    }
    return out;
}

// Whether a device is a GPU-class device that runs on the CPU (a CPU-type Vulkan device such
// as Mesa's lavapipe, which ggml reports as a GPU): our Vulkan patch answers through the
// backend's proc address; every other backend has no such device.
bool runs_on_cpu(ggml_backend_dev_t dev) {
    using is_cpu_type_fn = bool (*)(ggml_backend_dev_t);
    auto is_cpu_type     = reinterpret_cast<is_cpu_type_fn>(
        ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), "ggml_backend_vk_device_is_cpu_type"));
    return is_cpu_type != nullptr && is_cpu_type(dev);
}

// A CUDA device's compute capability as ggml's kernel choices see it ("8.6"), through the proc
// address our CUDA patch adds; empty for other devices and for a CUDA backend without the patch.
std::string compute_capability(ggml_backend_dev_t dev) {
    using cc_fn = int (*)(ggml_backend_dev_t);
    auto cc     = reinterpret_cast<cc_fn>(
        ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), "ggml_backend_cuda_device_compute_capability"));
    if (cc == nullptr) {
        return "";
    }
    const int v = cc(dev); // ggml's number: 100*major + 10*minor
    return std::to_string(v / 100) + "." + std::to_string((v % 100) / 10);
}

// devices() -> [{ name, description, type, backend, freeBytes, totalBytes, features,
// extraBufferTypes, onCpu, computeCapability? }]; a remote device (addRpcServer) reports the memory it had when it was added
Napi::Value devices(const Napi::CallbackInfo & info) {
    Napi::Env env   = info.Env();
    Napi::Array out = Napi::Array::New(env);
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        size_t free_bytes = 0, total_bytes = 0;
        device_memory(dev, &free_bytes, &total_bytes);
        Napi::Object d = Napi::Object::New(env);
        d.Set("name", ggml_backend_dev_name(dev));
        d.Set("description", ggml_backend_dev_description(dev));
        d.Set("type", device_type_name(ggml_backend_dev_type(dev)));
        d.Set("backend", ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)));
        d.Set("freeBytes", static_cast<double>(free_bytes));
        d.Set("totalBytes", static_cast<double>(total_bytes));
        d.Set("features", backend_features(env, ggml_backend_dev_backend_reg(dev)));
        d.Set("extraBufferTypes", extra_buffer_types(env, dev));
        d.Set("onCpu", runs_on_cpu(dev));
        if (const std::string cc = compute_capability(dev); !cc.empty()) {
            d.Set("computeCapability", cc);
        }
        out.Set(static_cast<uint32_t>(i), d);
    }
    return out;
}

// tryLoadLibrary(pathOrName) -> null when it loads, else the system loader's message.
// Lets the engine say why the CUDA backend yields no device (no driver, no runtime, ...).
Napi::Value try_load(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        throw Napi::TypeError::New(env, "tryLoadLibrary(pathOrName): a string is needed");
    }
    std::string why = try_load_library(info[0].As<Napi::String>().Utf8Value());
    return why.empty() ? env.Null() : Napi::Value(Napi::String::New(env, why));
}

// liveHandles() -> { models, contexts, jobs, projectors }: what native state is still alive
Napi::Value live_handles(const Napi::CallbackInfo & info) {
    Napi::Env env    = info.Env();
    Napi::Object out = Napi::Object::New(env);
    out.Set("models", live().models.load());
    out.Set("contexts", live().contexts.load());
    out.Set("jobs", live().jobs.load());
    out.Set("projectors", live().projectors.load());
    return out;
}

// trapForTest(): executes an illegal instruction, as a build for another CPU does in its first
// kernel. The host dies of it (SIGILL on Linux, STATUS_ILLEGAL_INSTRUCTION on Windows), and the
// test checks what the main process makes of that end on each platform.
Napi::Value trap_for_test(const Napi::CallbackInfo & info) {
#if defined(_MSC_VER)
    __ud2();
#else
    __builtin_trap();
#endif
    return info.Env().Undefined();
}

} // namespace

Napi::Object init_module(Napi::Env env, Napi::Object exports) {
    env.SetInstanceData(new addon_data());
    exports.Set("init", Napi::Function::New(env, guarded_fn<init>, "init"));
    exports.Set("devices", Napi::Function::New(env, guarded_fn<devices>, "devices"));
    exports.Set("tryLoadLibrary", Napi::Function::New(env, guarded_fn<try_load>, "tryLoadLibrary"));
    exports.Set("liveHandles", Napi::Function::New(env, guarded_fn<live_handles>, "liveHandles"));
    exports.Set("trapForTest", Napi::Function::New(env, trap_for_test, "trapForTest"));
    rpc_init(env, exports);
    quantize_init(env, exports);
    Model::init(env, exports);
    Session::init(env, exports);
    return exports;
}

} // namespace power

static Napi::Object InitPower(Napi::Env env, Napi::Object exports) {
    return power::init_module(env, exports);
}

NODE_API_MODULE(power, InitPower)
