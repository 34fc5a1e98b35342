#include "quantize.h"

#include <cctype>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "background_job.h"
#include "ggml.h"
#include "guard.h"
#include "js_options.h"
#include "llama.h"
#include "log_capture.h"

namespace power {
namespace {

struct quantize_request {
    std::string input;
    std::string output;
    llama_ftype ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    bool pure         = false;
    bool requantize   = false; // tensors already quantized are quantized again
    int32_t threads   = 0;
    // the patterns live here; `overrides` points into them and ends with a null pattern
    std::vector<std::string> patterns;
    std::vector<llama_model_tensor_override> overrides;
};

bool same_name(const char * a, const std::string & b) {
    size_t i = 0;
    for (; a[i] != '\0' && i < b.size(); i++) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return a[i] == '\0' && i == b.size();
}

// a ggml type by the name ggml gives it (q4_K, Q6_K, f16: case does not matter)
ggml_type type_named(Napi::Env env, const std::string & name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const auto type = static_cast<ggml_type>(t);
        if (ggml_type_size(type) == 0) {
            continue; // a removed type keeps its number and nothing else
        }
        if (same_name(ggml_type_name(type), name)) {
            return type;
        }
    }
    throw Napi::RangeError::New(env, "llama.cpp knows no tensor type '" + name + "'");
}

void read_overrides(Napi::Env env, const Napi::Array & list, quantize_request & req) {
    std::vector<ggml_type> types;
    for (uint32_t i = 0; i < list.Length(); i++) {
        Napi::Value entry = list.Get(i);
        if (!entry.IsObject()) {
            throw Napi::TypeError::New(env, "overrides entries must be { pattern, type }");
        }
        Napi::Object o                 = entry.As<Napi::Object>();
        std::optional<std::string> pat = string_option(o, "pattern");
        std::optional<std::string> typ = string_option(o, "type");
        if (!pat || pat->empty() || !typ) {
            throw Napi::TypeError::New(env, "overrides entries must be { pattern, type } with a pattern that is not empty");
        }
        try {
            std::regex check(*pat); // llama.cpp compiles it on the job's thread; refuse it here instead
        } catch (const std::regex_error & e) {
            throw Napi::RangeError::New(env, "pattern '" + *pat + "' is not a regular expression: " + e.what());
        }
        req.patterns.push_back(*pat);
        types.push_back(type_named(env, *typ));
    }
    for (size_t i = 0; i < req.patterns.size(); i++) {
        req.overrides.push_back({req.patterns[i].c_str(), types[i]});
    }
    req.overrides.push_back({nullptr, GGML_TYPE_COUNT});
}

Napi::Value quantize(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
        throw Napi::TypeError::New(env, "quantize(options): options must be an object");
    }
    Napi::Object opts                 = info[0].As<Napi::Object>();
    auto req                          = std::make_shared<quantize_request>();
    std::optional<std::string> input  = string_option(opts, "input");
    std::optional<std::string> output = string_option(opts, "output");
    if (!input || !output || input->empty() || output->empty()) {
        throw Napi::TypeError::New(env, "quantize(options): input and output must be file paths");
    }
    req->input      = *input;
    req->output     = *output;
    req->ftype      = static_cast<llama_ftype>(integer_option(opts, "ftype", LLAMA_FTYPE_MOSTLY_Q8_0, 0, LLAMA_FTYPE_GUESSED - 1));
    req->pure       = bool_option(opts, "pure", false);
    req->requantize = bool_option(opts, "allowRequantize", false);
    req->threads    = static_cast<int32_t>(integer_option(opts, "threads", 0, 0, 1024));
    if (std::optional<Napi::Array> list = array_option(opts, "overrides")) {
        read_overrides(env, *list, *req);
    }
    return background_job::start(env, "power.quantize", [req](background_job & job) {
        llama_model_quantize_params params = llama_model_quantize_default_params();
        params.ftype                       = req->ftype;
        params.nthread                     = req->threads;
        params.pure                        = req->pure;
        params.allow_requantize            = req->requantize;
        params.tt_overrides                = req->overrides.empty() ? nullptr : req->overrides.data();
        uint64_t mark                      = log_capture_mark();
        if (llama_model_quantize(req->input.c_str(), req->output.c_str(), &params) != 0) {
            // the fallback warnings of the tensors done before the failure are not the reason
            std::string why = log_capture_errors_since(mark);
            job.reject("llama.cpp could not quantize " + req->input + (why.empty() ? "" : ": " + why));
            return;
        }
        job.resolve([](Napi::Env env) -> Napi::Value { return env.Null(); });
    });
}

} // namespace

void quantize_init(Napi::Env env, Napi::Object exports) {
    exports.Set("quantize", Napi::Function::New(env, guarded_fn<quantize>, "quantize"));
}

} // namespace power
