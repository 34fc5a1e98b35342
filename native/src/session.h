#pragma once
// Session: a llama.cpp context with its own sequence on a Model. JS:
// Session.create(model, options) -> Promise<Session>, generate(prompt, options, onEvent),
// cancel(), dispose(), info(), memoryCells().

#include <napi.h>

#include "guard.h"

#include "session_core.h"

namespace power {

class Session : public Napi::ObjectWrap<Session> {
  public:
    static void init(Napi::Env env, Napi::Object exports);
    explicit Session(const Napi::CallbackInfo & info);

  private:
    // an instance method through guard_llama (guard.h): registered as guarded<&Session::method>
    template <Napi::Value (Session::*M)(const Napi::CallbackInfo &)> Napi::Value guarded(const Napi::CallbackInfo & info) {
        return guard_llama(info.Env(), [&] { return (this->*M)(info); });
    }

    static Napi::Value create(const Napi::CallbackInfo & info);
    Napi::Value generate(const Napi::CallbackInfo & info);
    Napi::Value cancel(const Napi::CallbackInfo & info);
    Napi::Value dispose(const Napi::CallbackInfo & info);
    Napi::Value info(const Napi::CallbackInfo & info);
    Napi::Value inject_failure(const Napi::CallbackInfo & info);
    Napi::Value hold(const Napi::CallbackInfo & info);
    // session_capture.cpp: `power audit`'s row capture
    Napi::Value capture_row(const Napi::CallbackInfo & info);
    Napi::Value captured_row(const Napi::CallbackInfo & info);
    Napi::Value perturb_row(const Napi::CallbackInfo & info);
    // session_memory.cpp: the KV cache's used cells and positions
    Napi::Value memory_cells(const Napi::CallbackInfo & info);
    Napi::Value suffix_store(const Napi::CallbackInfo & info);

    session_core & live_core(Napi::Env env);
    // live_core between requests: while one runs its thread owns the context, so a method that
    // reads or arms it refuses with `busy_message`
    session_core & idle_core(Napi::Env env, const char * busy_message = "session is busy with another request");

    session_core_ref core_;
};

} // namespace power
