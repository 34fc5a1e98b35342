#pragma once
// llama.cpp's model quantizer (llama_model_quantize), for `power quantize`:
//   quantize({ input, output, ftype, overrides: [{ pattern, type }], pure, threads }) -> Promise<null>
// writes `output` from `input` on a thread of its own. ftype is a llama_ftype (its base type and
// llama.cpp's own mix for the tensors no pattern names); overrides are llama.cpp's per-tensor
// types (--tensor-type): an ECMAScript regex searched in each quantizable tensor's name, the
// first that matches wins; pure: the tensors no pattern names all take the base type. The
// caller writes to a temporary name and renames it (a failed run leaves no output behind).

#include <napi.h>

namespace power {

void quantize_init(Napi::Env env, Napi::Object exports);

} // namespace power
