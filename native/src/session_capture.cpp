// Session methods for `power audit` (row_capture.h): arm a capture before a request, read it after.

#include <algorithm>
#include <cmath>
#include <string>

#include "session.h"

namespace power {
namespace {

llama_pos position_arg(const Napi::CallbackInfo & info, const char * what) {
    if (info.Length() < 1 || !info[0].IsNumber()) {
        throw Napi::TypeError::New(info.Env(), std::string(what) + ": position must be a number");
    }
    const double pos = info[0].As<Napi::Number>().DoubleValue();
    if (!(pos >= 0 && pos < (1 << 24) && pos == std::floor(pos))) {
        throw Napi::RangeError::New(info.Env(), std::string(what) + ": position must be an integer in [0, 16777216)");
    }
    return static_cast<llama_pos>(pos);
}

} // namespace

// captureRow(position, otherRow?: Float32Array): the next requests keep the logits row the token
// at `position` is sampled from; with otherRow (n_vocab logits), also what the sampler in that
// same state draws from it.
Napi::Value Session::capture_row(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = idle_core(env);
    const llama_pos pos = position_arg(info, "captureRow");
    std::vector<float> other;
    if (info.Length() > 1 && !info[1].IsUndefined() && !info[1].IsNull()) {
        if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
            throw Napi::TypeError::New(env, "captureRow: otherRow must be a Float32Array");
        }
        Napi::Float32Array row = info[1].As<Napi::Float32Array>();
        const int32_t n_vocab  = llama_vocab_n_tokens(llama_model_get_vocab(core.model.get()));
        if (static_cast<int64_t>(row.ElementLength()) != n_vocab) {
            throw Napi::RangeError::New(env, "captureRow: otherRow must hold " + std::to_string(n_vocab) + " logits");
        }
        other.assign(row.Data(), row.Data() + row.ElementLength());
    }
    core.capture.arm(pos, std::move(other));
    return env.Undefined();
}

// capturedRow() -> { row: Float32Array, rowToken, otherToken: number | null, backend, drawnFromIds,
// drawnFromP } | null (not sampled yet); rowToken / otherToken: what the sampler, as it stood
// before that token, draws from each row; backend: the token was drawn on the backend (rowToken,
// no row); drawnFrom*: the candidates the CPU draw accumulated over, in order, with their p
Napi::Value Session::captured_row(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = idle_core(env);
    if (!core.capture.captured) {
        return env.Null();
    }
    Napi::Float32Array row = Napi::Float32Array::New(env, core.capture.row.size());
    std::copy(core.capture.row.begin(), core.capture.row.end(), row.Data());
    const auto & drawn         = core.capture.drawn_from;
    Napi::Int32Array drawn_ids = Napi::Int32Array::New(env, drawn.size());
    Napi::Float64Array drawn_p = Napi::Float64Array::New(env, drawn.size());
    for (size_t i = 0; i < drawn.size(); i++) {
        drawn_ids[i] = drawn[i].id;
        drawn_p[i]   = drawn[i].p;
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("row", row);
    out.Set("backend", core.capture.backend);
    out.Set("drawnFromIds", drawn_ids);
    out.Set("drawnFromP", drawn_p);
    out.Set("rowToken", core.capture.row_token);
    out.Set("otherToken", core.capture.other_token >= 0 ? Napi::Value(Napi::Number::New(env, core.capture.other_token)) : env.Null());
    return out;
}

// perturbRowForTest(position, hidden): raises the runner-up of the row sampled for `position`
// above its top logit (hidden: the captured row stays the unperturbed one). For tests only.
Napi::Value Session::perturb_row(const Napi::CallbackInfo & info) {
    Napi::Env env                 = info.Env();
    session_core & core           = live_core(env);
    core.capture.perturb_position = position_arg(info, "perturbRowForTest");
    core.capture.perturb_hidden   = info.Length() > 1 && info[1].ToBoolean().Value();
    return env.Undefined();
}

} // namespace power
