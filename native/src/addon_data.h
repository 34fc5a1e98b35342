#pragma once
// Per-environment data: the constructors the addon needs to create wrapped objects from
// native code (a loaded model, a created session).

#include <napi.h>

namespace power {

struct addon_data {
    Napi::FunctionReference model_ctor;
    Napi::FunctionReference session_ctor;
};

// the addon's data for this environment (set up at module init)
addon_data & data_of(Napi::Env env);

} // namespace power
