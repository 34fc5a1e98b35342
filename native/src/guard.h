// JS-thread entry points of the addon through one guard: node-addon-api turns only a
// Napi::Error into a JavaScript exception, while llama.cpp throws standard exceptions
// (std::out_of_range from its vocabulary maps, std::runtime_error from its loaders). Left alone
// they reach std::terminate and end the engine host; guarded, they fail the call that met them.
// The background jobs catch them on their own threads (background_job.cpp, Session::generate).
#pragma once

#include <napi.h>

#include <exception>
#include <string>

namespace power {

// Runs one entry point's body; a C++ exception other than a Napi::Error becomes an Error.
template <typename F> Napi::Value guard_llama(Napi::Env env, F && body) {
    try {
        return body();
    } catch (const Napi::Error &) {
        throw;
    } catch (const std::exception & e) {
        throw Napi::Error::New(env, std::string("llama.cpp failed: ") + e.what());
    } catch (...) {
        throw Napi::Error::New(env, "llama.cpp failed with an exception that is not a std::exception");
    }
}

// A free or static entry point through guard_llama: register guarded_fn<&f>.
template <Napi::Value (*F)(const Napi::CallbackInfo &)> Napi::Value guarded_fn(const Napi::CallbackInfo & info) {
    return guard_llama(info.Env(), [&] { return F(info); });
}

} // namespace power
