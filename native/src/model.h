#pragma once
// Model: a loaded GGUF (weights + vocabulary). JS: Model.load(path, options) -> Promise<Model>,
// info(), tokenize(), detokenize(), applyChat(), parseChat(), dispose().

#include <napi.h>

#include "guard.h"

#include "handles.h"

namespace power {

class Model : public Napi::ObjectWrap<Model> {
  public:
    static void init(Napi::Env env, Napi::Object exports);
    // wraps an already loaded model in a new JS Model; mtp_loaded: its NextN/MTP weights were
    // loaded (llama_model_params.load_mtp)
    static Napi::Object wrap(Napi::Env env, model_ref model, bool mtp_loaded);
    // the model behind a JS Model; throws a JS error when disposed or not a Model
    static model_ref unwrap(Napi::Env env, Napi::Value value);
    // whether the JS Model was loaded with loadMtp (llama.cpp skips the NextN weights otherwise,
    // and an MTP context on such a model aborts while building its graph)
    static bool mtp_loaded(Napi::Env env, Napi::Value value);

    explicit Model(const Napi::CallbackInfo & info);

  private:
    // an instance method through guard_llama (guard.h): registered as guarded<&Model::method>
    template <Napi::Value (Model::*M)(const Napi::CallbackInfo &)> Napi::Value guarded(const Napi::CallbackInfo & info) {
        return guard_llama(info.Env(), [&] { return (this->*M)(info); });
    }

    static Napi::Value load(const Napi::CallbackInfo & info);
    Napi::Value info(const Napi::CallbackInfo & info);
    Napi::Value tokenize(const Napi::CallbackInfo & info);
    Napi::Value detokenize(const Napi::CallbackInfo & info);
    Napi::Value dispose(const Napi::CallbackInfo & info);
    Napi::Value disposed(const Napi::CallbackInfo & info);
    Napi::Value sampling_order_check(const Napi::CallbackInfo & info);
    // model_chat.cpp: the chat prompt with tools, and the tool calls in a reply, as llama-server
    Napi::Value apply_chat(const Napi::CallbackInfo & info);
    Napi::Value parse_chat(const Napi::CallbackInfo & info);

    const llama_model & live_model(Napi::Env env) const;
    llama_token checked_token(Napi::Env env, Napi::Value value) const;

    model_ref model_;
    bool mtp_loaded_ = false;
};

} // namespace power
