#include "model.h"

#include <cmath>
#include <string>
#include <vector>

#include "addon_data.h"
#include "background_job.h"
#include "common.h" // LLM_FFN_EXPS_REGEX: the expert tensors of --cpu-moe
#include "js_options.h"
#include "log_capture.h"
#include "sampling.h"

namespace power {

namespace {

const char * vocab_type_name(enum llama_vocab_type type) {
    switch (type) {
    case LLAMA_VOCAB_TYPE_NONE:
        return "none";
    case LLAMA_VOCAB_TYPE_SPM:
        return "spm";
    case LLAMA_VOCAB_TYPE_BPE:
        return "bpe";
    case LLAMA_VOCAB_TYPE_WPM:
        return "wpm";
    case LLAMA_VOCAB_TYPE_UGM:
        return "ugm";
    case LLAMA_VOCAB_TYPE_RWKV:
        return "rwkv";
    case LLAMA_VOCAB_TYPE_PLAMO2:
        return "plamo2";
    }
    return "unknown";
}

std::string meta_string(const llama_model * model, const char * key) {
    std::vector<char> buf(256);
    int32_t n = llama_model_meta_val_str(model, key, buf.data(), buf.size());
    if (n < 0) {
        return {};
    }
    if (static_cast<size_t>(n) >= buf.size()) {
        buf.resize(n + 1);
        llama_model_meta_val_str(model, key, buf.data(), buf.size());
    }
    return std::string(buf.data(), n);
}

// what the load worker needs, copied out of JS before the thread starts
struct load_request {
    std::string path;
    int32_t gpu_layers = -1; // negative: all
    bool load_mtp      = false;
    bool pick_devices  = false;              // false: llama.cpp picks (every GPU); true: exactly `devices`
    std::vector<ggml_backend_dev_t> devices; // nullptr-terminated when pick_devices; empty list = CPU only
    llama_split_mode split_mode = LLAMA_SPLIT_MODE_LAYER;
    int32_t main_gpu            = 0;
    std::vector<float> tensor_split; // llama_max_devices() entries when given; empty: by free memory
    // tensor buffer overrides (the experts kept in host memory): the patterns live here, the
    // list points into them and ends with a null pattern
    std::vector<std::string> override_patterns;
    std::vector<llama_model_tensor_buft_override> overrides;
    bool has_progress = false;
    Napi::FunctionReference on_progress; // touched only on the JS thread
    int last_percent     = -1;           // touched only on the load thread
    background_job * job = nullptr;
};

// splitMode ('layer' | 'row' | 'none'), mainGpu, tensorSplit (proportions per device of the
// list), cpuMoe (every expert tensor in host memory), nCpuMoe (those of blocks 0..N-1): llama.cpp's
// --split-mode, --main-gpu, --tensor-split, --cpu-moe and --n-cpu-moe
void read_split_options(Napi::Env env, const Napi::Object & opts, load_request & req) {
    if (std::optional<std::string> mode = choice_option(opts, "splitMode", {"layer", "row", "none"})) {
        req.split_mode = *mode == "layer" ? LLAMA_SPLIT_MODE_LAYER : *mode == "row" ? LLAMA_SPLIT_MODE_ROW : LLAMA_SPLIT_MODE_NONE;
    }
    req.main_gpu = static_cast<int32_t>(integer_option(opts, "mainGpu", req.main_gpu, 0, static_cast<int64_t>(llama_max_devices()) - 1));
    if (std::optional<Napi::Array> split = array_option(opts, "tensorSplit")) {
        Napi::Array parts = *split;
        if (parts.Length() > llama_max_devices()) {
            throw Napi::RangeError::New(env, "tensorSplit has " + std::to_string(parts.Length()) + " entries; llama.cpp takes at most " +
                                                 std::to_string(llama_max_devices()));
        }
        req.tensor_split.assign(llama_max_devices(), 0.0f);
        for (uint32_t i = 0; i < parts.Length(); i++) {
            Napi::Value entry = parts.Get(i);
            const double v    = entry.IsNumber() ? entry.As<Napi::Number>().DoubleValue() : -1;
            if (!std::isfinite(v) || v < 0) {
                throw Napi::RangeError::New(env, "tensorSplit entries must be finite and not negative");
            }
            req.tensor_split[i] = static_cast<float>(v);
        }
    }
    const bool cpu_moe      = bool_option(opts, "cpuMoe", false);
    const int32_t n_cpu_moe = static_cast<int32_t>(integer_option(opts, "nCpuMoe", 0, 0, 100000));
    if (!cpu_moe && n_cpu_moe == 0) {
        return;
    }
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!cpu) {
        throw Napi::Error::New(env, "no CPU device is loaded to keep the experts on");
    }
    if (cpu_moe) {
        req.override_patterns.emplace_back(LLM_FFN_EXPS_REGEX);
    } else {
        for (int32_t i = 0; i < n_cpu_moe; i++) {
            // llm_ffn_block_regex's "blk\\.%d%s" (common.h), without its string_format
            req.override_patterns.push_back("blk\\." + std::to_string(i) + LLM_FFN_EXPS_REGEX);
        }
    }
    ggml_backend_buffer_type_t host = ggml_backend_dev_buffer_type(cpu);
    for (const std::string & pattern : req.override_patterns) {
        req.overrides.push_back({pattern.c_str(), host});
    }
    req.overrides.push_back({nullptr, nullptr});
}

bool report_progress(float progress, void * user_data) {
    auto * req  = static_cast<load_request *>(user_data);
    int percent = static_cast<int>(std::floor(progress * 100.0f));
    if (req->has_progress && percent != req->last_percent) {
        req->last_percent = percent;
        req->job->post([req, progress](Napi::Env env) {
            Napi::HandleScope scope(env);
            req->on_progress.Call({Napi::Number::New(env, progress)});
        });
    }
    return true;
}

} // namespace

void Model::init(Napi::Env env, Napi::Object exports) {
    Napi::Function ctor     = DefineClass(env, "Model",
                                          {
                                              StaticMethod<&guarded_fn<&Model::load>>("load"),
                                              InstanceMethod<&Model::guarded<&Model::info>>("info"),
                                              InstanceMethod<&Model::guarded<&Model::tokenize>>("tokenize"),
                                              InstanceMethod<&Model::guarded<&Model::detokenize>>("detokenize"),
                                              InstanceMethod<&Model::guarded<&Model::apply_chat>>("applyChat"),
                                              InstanceMethod<&Model::guarded<&Model::parse_chat>>("parseChat"),
                                              InstanceMethod<&Model::guarded<&Model::dispose>>("dispose"),
                                              InstanceMethod<&Model::guarded<&Model::sampling_order_check>>("samplingOrderCheckForTest"),
                                              InstanceAccessor<&Model::disposed>("disposed"),
                                          });
    data_of(env).model_ctor = Napi::Persistent(ctor);
    exports.Set("Model", ctor);
}

namespace {
// what Model::wrap hands the constructor
struct model_handle {
    model_ref model;
    bool mtp_loaded = false;
};
} // namespace

Model::Model(const Napi::CallbackInfo & info) : Napi::ObjectWrap<Model>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) {
        throw Napi::TypeError::New(info.Env(), "use Model.load(path, options) to load a model");
    }
    const model_handle & handle = *info[0].As<Napi::External<model_handle>>().Data();
    model_                      = handle.model;
    mtp_loaded_                 = handle.mtp_loaded;
}

Napi::Object Model::wrap(Napi::Env env, model_ref model, bool mtp_loaded) {
    model_handle holder{std::move(model), mtp_loaded};
    return data_of(env).model_ctor.New({Napi::External<model_handle>::New(env, &holder)});
}

bool Model::mtp_loaded(Napi::Env env, Napi::Value value) {
    unwrap(env, value); // validates
    return Unwrap(value.As<Napi::Object>())->mtp_loaded_;
}

model_ref Model::unwrap(Napi::Env env, Napi::Value value) {
    if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(data_of(env).model_ctor.Value())) {
        throw Napi::TypeError::New(env, "expected a Model");
    }
    Model * self = Unwrap(value.As<Napi::Object>());
    self->live_model(env);
    return self->model_;
}

const llama_model & Model::live_model(Napi::Env env) const {
    if (!model_) {
        throw Napi::Error::New(env, "model is disposed");
    }
    return *model_;
}

llama_token Model::checked_token(Napi::Env env, Napi::Value value) const {
    const llama_vocab * vocab = llama_model_get_vocab(&live_model(env));
    if (!value.IsNumber()) {
        throw Napi::TypeError::New(env, "token id must be a number");
    }
    double id = value.As<Napi::Number>().DoubleValue();
    if (id != std::floor(id) || id < 0 || id >= llama_vocab_n_tokens(vocab)) {
        throw Napi::RangeError::New(env, "token id " + std::to_string(id) + " is outside the vocabulary");
    }
    return static_cast<llama_token>(id);
}

// Model.load(path, { gpuLayers?, loadMtp?, devices?, splitMode?, mainGpu?, tensorSplit?, cpuMoe?,
//                    nCpuMoe?, onProgress? }) -> Promise<Model>
Napi::Value Model::load(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        throw Napi::TypeError::New(env, "Model.load(path, options): path must be a string");
    }
    auto req  = std::make_shared<load_request>();
    req->path = info[0].As<Napi::String>().Utf8Value();
    if (info.Length() > 1 && info[1].IsObject()) {
        Napi::Object opts = info[1].As<Napi::Object>();
        // -1: every layer (llama.cpp's default)
        req->gpu_layers = static_cast<int32_t>(integer_option(opts, "gpuLayers", req->gpu_layers, -1, 100000));
        req->load_mtp   = bool_option(opts, "loadMtp", false);
        if (std::optional<Napi::Array> names = array_option(opts, "devices")) {
            // by name (CUDA0, ...); [] keeps every layer and every op on the CPU
            req->pick_devices = true;
            for (const std::string & name : string_list(*names, "devices")) {
                ggml_backend_dev_t dev = ggml_backend_dev_by_name(name.c_str());
                if (!dev) {
                    throw Napi::Error::New(env, "no device named '" + name + "' is loaded");
                }
                req->devices.push_back(dev);
            }
            req->devices.push_back(nullptr);
        }
        read_split_options(env, opts, *req);
        if (std::optional<Napi::Function> progress = function_option(opts, "onProgress")) {
            req->on_progress  = Napi::Persistent(*progress);
            req->has_progress = true;
        }
    }

    return background_job::start(env, "power.Model.load", [req](background_job & job) {
        req->job                           = &job;
        llama_model_params params          = llama_model_default_params();
        params.n_gpu_layers                = req->gpu_layers;
        params.load_mtp                    = req->load_mtp;
        params.devices                     = req->pick_devices ? req->devices.data() : nullptr;
        params.split_mode                  = req->split_mode;
        params.main_gpu                    = req->main_gpu;
        params.tensor_split                = req->tensor_split.empty() ? nullptr : req->tensor_split.data();
        params.tensor_buft_overrides       = req->overrides.empty() ? nullptr : req->overrides.data();
        params.progress_callback           = report_progress;
        params.progress_callback_user_data = req.get();

        uint64_t mark     = log_capture_mark();
        llama_model * raw = llama_model_load_from_file(req->path.c_str(), params);
        // the JS progress callback is released on the JS thread, whatever the outcome
        job.post([req](Napi::Env) { req->on_progress.Reset(); });
        if (!raw) {
            std::string why = log_capture_problems_since(mark);
            job.reject("llama.cpp could not load " + req->path + (why.empty() ? "" : ": " + why));
            return;
        }
        model_ref model = adopt_model(raw);
        // NextN weights are loaded only when asked for and when the file has NextN layers
        const bool mtp_loaded = req->load_mtp && llama_model_n_layer_nextn(raw) > 0;
        job.resolve([model, mtp_loaded](Napi::Env env) -> Napi::Value { return wrap(env, model, mtp_loaded); });
    });
}

Napi::Value Model::info(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_model & model = live_model(env);
    const llama_vocab * vocab = llama_model_get_vocab(&model);

    char desc[256] = {0};
    llama_model_desc(&model, desc, sizeof desc);
    const char * tmpl = llama_model_chat_template(&model, nullptr);

    Napi::Object out = Napi::Object::New(env);
    out.Set("architecture", meta_string(&model, "general.architecture"));
    out.Set("name", meta_string(&model, "general.name"));
    out.Set("description", std::string(desc));
    out.Set("parameters", static_cast<double>(llama_model_n_params(&model)));
    out.Set("sizeBytes", static_cast<double>(llama_model_size(&model)));
    out.Set("fileType", llama_ftype_name(llama_model_ftype(&model)));
    out.Set("contextLength", llama_model_n_ctx_train(&model));
    out.Set("layers", llama_model_n_layer(&model));
    out.Set("nextnLayers", llama_model_n_layer_nextn(&model));
    out.Set("embeddingLength", llama_model_n_embd(&model));
    out.Set("heads", llama_model_n_head(&model));
    out.Set("headsKv", llama_model_n_head_kv(&model));
    out.Set("recurrent", llama_model_is_recurrent(&model) || llama_model_is_hybrid(&model));
    out.Set("hybrid", llama_model_is_hybrid(&model));
    out.Set("vocabType", vocab_type_name(llama_vocab_type(vocab)));
    out.Set("vocabSize", llama_vocab_n_tokens(vocab));
    out.Set("bos", llama_vocab_bos(vocab));
    out.Set("eos", llama_vocab_eos(vocab));
    out.Set("eot", llama_vocab_eot(vocab));
    out.Set("addBos", llama_vocab_get_add_bos(vocab));
    out.Set("chatTemplate", tmpl ? Napi::Value(Napi::String::New(env, tmpl)) : env.Null());
    return out;
}

// tokenize(text, addSpecial, parseSpecial) -> Int32Array
Napi::Value Model::tokenize(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_vocab * vocab = llama_model_get_vocab(&live_model(env));
    if (info.Length() < 1 || !info[0].IsString()) {
        throw Napi::TypeError::New(env, "tokenize(text, addSpecial, parseSpecial): text must be a string");
    }
    std::string text   = info[0].As<Napi::String>().Utf8Value();
    bool add_special   = info.Length() > 1 && info[1].ToBoolean();
    bool parse_special = info.Length() > 2 && info[2].ToBoolean();

    std::vector<llama_token> tokens(text.size() + 4);
    int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(), static_cast<int32_t>(tokens.size()),
                               add_special, parse_special);
    if (n < 0 && n != INT32_MIN) {
        tokens.resize(-n);
        n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(), static_cast<int32_t>(tokens.size()),
                           add_special, parse_special);
    }
    if (n < 0) {
        throw Napi::Error::New(env, "tokenization failed");
    }
    Napi::Int32Array out = Napi::Int32Array::New(env, n);
    std::copy(tokens.begin(), tokens.begin() + n, out.Data());
    return out;
}

// detokenize(tokens: Int32Array, renderSpecial) -> string
Napi::Value Model::detokenize(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_vocab * vocab = llama_model_get_vocab(&live_model(env));
    if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
        throw Napi::TypeError::New(env, "detokenize(tokens, renderSpecial): tokens must be an Int32Array");
    }
    Napi::Int32Array tokens = info[0].As<Napi::Int32Array>();
    for (size_t i = 0; i < tokens.ElementLength(); i++) {
        checked_token(env, Napi::Number::New(env, tokens[i]));
    }
    bool render_special = info.Length() > 1 && info[1].ToBoolean();
    std::vector<char> text(tokens.ElementLength() * 8 + 16);
    int32_t n = llama_detokenize(vocab, tokens.Data(), static_cast<int32_t>(tokens.ElementLength()), text.data(),
                                 static_cast<int32_t>(text.size()), false, render_special);
    if (n < 0) {
        text.resize(-n);
        n = llama_detokenize(vocab, tokens.Data(), static_cast<int32_t>(tokens.ElementLength()), text.data(),
                             static_cast<int32_t>(text.size()), false, render_special);
    }
    if (n < 0) {
        throw Napi::Error::New(env, "detokenization failed");
    }
    return Napi::String::New(env, text.data(), n);
}

// dispose() -> Promise<void>. Sessions hold their own reference, so the weights are freed
// when the last session on this model is disposed too.
Napi::Value Model::dispose(const Napi::CallbackInfo & info) {
    model_.reset();
    auto deferred = Napi::Promise::Deferred::New(info.Env());
    deferred.Resolve(info.Env().Undefined());
    return deferred.Promise();
}

Napi::Value Model::disposed(const Napi::CallbackInfo & info) {
    return Napi::Boolean::New(info.Env(), !model_);
}

// samplingOrderCheckForTest(rows: Float32Array (nRows x n_vocab), proposals: Int32Array, sampling,
// extraDraws) -> { spec, ar, probeSpec, probeAr }. For tests: feeds the same logit rows to the
// transaction's step-4 rule and to a plain autoregressive sampler (one row per emitted token,
// plus `extraDraws` rows to show the probe notices), then draws once more from row 0 with each
// sampler: equal probes mean equal random state.
Napi::Value Model::sampling_order_check(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_vocab * vocab = llama_model_get_vocab(&live_model(env));
    const int32_t n_vocab     = llama_vocab_n_tokens(vocab);
    if (info.Length() < 4 || !info[0].IsTypedArray() || !info[1].IsTypedArray() || !info[2].IsObject()) {
        throw Napi::TypeError::New(env, "samplingOrderCheckForTest(rows, proposals, sampling, extraDraws)");
    }
    Napi::Float32Array rows = info[0].As<Napi::Float32Array>();
    Napi::Int32Array props  = info[1].As<Napi::Int32Array>();
    const int32_t extra     = info[3].As<Napi::Number>().Int32Value();
    const int32_t n_rows    = static_cast<int32_t>(rows.ElementLength() / n_vocab);
    if (n_rows * n_vocab != static_cast<int32_t>(rows.ElementLength()) || n_rows != static_cast<int32_t>(props.ElementLength()) + 1) {
        throw Napi::RangeError::New(env, "rows must hold proposals + 1 rows of n_vocab logits");
    }
    Napi::Object o = info[2].As<Napi::Object>();
    sampling_params sp;
    sp.temperature     = o.Get("temperature").As<Napi::Number>().FloatValue();
    sp.seed            = o.Get("seed").As<Napi::Number>().Uint32Value();
    sp.top_k           = o.Get("topK").As<Napi::Number>().Int32Value();
    sp.top_p           = o.Get("topP").As<Napi::Number>().FloatValue();
    sp.min_p           = o.Get("minP").As<Napi::Number>().FloatValue();
    sp.repeat_penalty  = o.Get("repeatPenalty").As<Napi::Number>().FloatValue();
    const float * data = rows.Data();
    auto row           = [data, n_vocab](int32_t i) {
        return data + static_cast<size_t>(i) * n_vocab;
    };
    std::vector<llama_token> proposals(props.Data(), props.Data() + props.ElementLength());

    target_sampler spec = make_sampler(vocab, sp);
    target_sampler ar   = make_sampler(vocab, sp);
    std::vector<llama_token_data> cur;
    std::vector<llama_token> emitted;
    std::vector<const char *> origins;
    const auto draw = [&](int32_t i) {
        return sample_row(spec, row(i), n_vocab, cur);
    };
    const row_decision d = sample_through_first_mismatch(vocab, draw, proposals, n_rows, emitted, origins);

    std::vector<llama_token> ar_tokens;
    const int32_t sampled_rows = static_cast<int32_t>(emitted.size()) + (d.eog ? 1 : 0);
    for (int32_t i = 0; i < sampled_rows + extra && i < n_rows; i++) {
        ar_tokens.push_back(sample_row(ar, row(i), n_vocab, cur));
    }
    const llama_token probe_spec = sample_row(spec, row(0), n_vocab, cur);
    const llama_token probe_ar   = sample_row(ar, row(0), n_vocab, cur);

    auto to_js = [&env](const std::vector<llama_token> & v) {
        Napi::Array a = Napi::Array::New(env, v.size());
        for (size_t i = 0; i < v.size(); i++)
            a.Set(static_cast<uint32_t>(i), v[i]);
        return a;
    };
    Napi::Object out = Napi::Object::New(env);
    out.Set("spec", to_js(emitted));
    out.Set("accepted", d.accepted);
    out.Set("eog", d.eog);
    out.Set("ar", to_js(ar_tokens));
    out.Set("probeSpec", probe_spec);
    out.Set("probeAr", probe_ar);
    return out;
}

} // namespace power
