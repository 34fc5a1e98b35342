#include "js_options.h"

#include <cmath>

#include "common.h"

namespace power {
namespace {

// the option's value when it is present and passes `is`; nullopt when absent (missing, undefined
// or null); a TypeError naming it and `what` it must be otherwise
template <typename Is> std::optional<Napi::Value> present(const Napi::Object & opts, const char * key, Is is, const char * what) {
    if (!opts.Has(key)) {
        return std::nullopt;
    }
    Napi::Value v = opts.Get(key);
    if (v.IsUndefined() || v.IsNull()) {
        return std::nullopt;
    }
    if (!is(v)) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be " + what);
    }
    return v;
}

bool is_finite_number(const Napi::Value & v) {
    return v.IsNumber() && std::isfinite(v.As<Napi::Number>().DoubleValue());
}

} // namespace

double number_option(const Napi::Object & opts, const char * key, double fallback) {
    std::optional<Napi::Value> v = present(opts, key, is_finite_number, "a finite number");
    return v ? v->As<Napi::Number>().DoubleValue() : fallback;
}

int64_t integer_option(const Napi::Object & opts, const char * key, int64_t fallback, int64_t lo, int64_t hi) {
    std::optional<Napi::Value> v = present(opts, key, is_finite_number, "a finite number");
    if (!v) {
        return fallback;
    }
    const double n = v->As<Napi::Number>().DoubleValue();
    if (n != std::floor(n) || n < static_cast<double>(lo) || n > static_cast<double>(hi)) {
        throw Napi::RangeError::New(opts.Env(),
                                    std::string(key) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int64_t>(n);
}

bool bool_option(const Napi::Object & opts, const char * key, bool fallback) {
    std::optional<Napi::Value> v = present(opts, key, [](const Napi::Value & x) { return x.IsBoolean(); }, "a boolean");
    return v ? v->As<Napi::Boolean>().Value() : fallback;
}

std::optional<std::string> string_option(const Napi::Object & opts, const char * key) {
    std::optional<Napi::Value> v = present(opts, key, [](const Napi::Value & x) { return x.IsString(); }, "a string");
    return v ? std::optional<std::string>(v->As<Napi::String>().Utf8Value()) : std::nullopt;
}

std::optional<std::string> choice_option(const Napi::Object & opts, const char * key, const std::vector<std::string> & allowed) {
    std::optional<std::string> s = string_option(opts, key);
    if (!s) {
        return s;
    }
    for (const std::string & a : allowed) {
        if (*s == a) {
            return s;
        }
    }
    std::string list;
    for (size_t i = 0; i < allowed.size(); i++) {
        list += (i == 0 ? "'" : i + 1 == allowed.size() ? " or '" : ", '") + allowed[i] + "'";
    }
    throw Napi::RangeError::New(opts.Env(), std::string(key) + " must be " + list + " (got '" + *s + "')");
}

std::optional<Napi::Array> array_option(const Napi::Object & opts, const char * key) {
    std::optional<Napi::Value> v = present(opts, key, [](const Napi::Value & x) { return x.IsArray(); }, "an array");
    return v ? std::optional<Napi::Array>(v->As<Napi::Array>()) : std::nullopt;
}

std::optional<Napi::Function> function_option(const Napi::Object & opts, const char * key) {
    std::optional<Napi::Value> v = present(opts, key, [](const Napi::Value & x) { return x.IsFunction(); }, "a function");
    return v ? std::optional<Napi::Function>(v->As<Napi::Function>()) : std::nullopt;
}

std::vector<std::string> string_list(const Napi::Array & array, const char * key) {
    std::vector<std::string> out;
    for (uint32_t i = 0; i < array.Length(); i++) {
        Napi::Value v = array.Get(i);
        if (!v.IsString()) {
            throw Napi::TypeError::New(array.Env(), std::string(key) + " must hold strings (entry " + std::to_string(i) + " is not one)");
        }
        out.push_back(v.As<Napi::String>().Utf8Value());
    }
    return out;
}

reasoning_budget_params reasoning_budget_option(const Napi::Object & opts, const char * key, const llama_vocab * vocab) {
    reasoning_budget_params rb;
    const std::string name       = key;
    std::optional<Napi::Value> v = present(
        opts, key, [](const Napi::Value & x) { return x.IsObject() && !x.IsArray(); }, "an object {tokens, start, ends, message, prefill}");
    if (!v) {
        return rb;
    }
    Napi::Env env  = opts.Env();
    Napi::Object o = v->As<Napi::Object>();
    rb.tokens      = static_cast<int32_t>(integer_option(o, "tokens", -1, 0, INT32_MAX));
    if (rb.tokens < 0) {
        throw Napi::TypeError::New(env, name + ".tokens must say how many tokens the thinking may take");
    }
    std::optional<std::string> start = string_option(o, "start");
    if (!start || start->empty()) {
        throw Napi::TypeError::New(env, name + ".start must be the tag that opens the thinking");
    }
    rb.start_text                   = *start;
    std::optional<Napi::Array> ends = array_option(o, "ends");
    if (ends) {
        rb.end_texts = string_list(*ends, (name + ".ends").c_str());
    }
    if (rb.end_texts.empty()) {
        throw Napi::TypeError::New(env, name + ".ends must hold the tags that close the thinking (the first is forced)");
    }
    const std::string message = string_option(o, "message").value_or("");
    // llama-server's server-schema.cpp: the tags and the message tokenized with special tokens
    // parsed; forced = the message's tokens, then the first end tag's
    rb.start = common_tokenize(vocab, rb.start_text, false, true);
    for (const std::string & tag : rb.end_texts) {
        rb.ends.push_back(common_tokenize(vocab, tag, false, true));
    }
    if (!message.empty()) {
        rb.forced = common_tokenize(vocab, message, false, true);
    }
    rb.forced.insert(rb.forced.end(), rb.ends.front().begin(), rb.ends.front().end());
    if (std::optional<Napi::Array> prefill = array_option(o, "prefill")) {
        const int32_t n_vocab = llama_vocab_n_tokens(vocab);
        for (uint32_t i = 0; i < prefill->Length(); i++) {
            Napi::Value t = prefill->Get(i);
            if (!t.IsNumber() || t.As<Napi::Number>().DoubleValue() != static_cast<double>(t.As<Napi::Number>().Int32Value()) ||
                t.As<Napi::Number>().Int32Value() < 0 || t.As<Napi::Number>().Int32Value() >= n_vocab) {
                throw Napi::RangeError::New(env, name + ".prefill holds a token that is not in the vocabulary");
            }
            rb.prefill.push_back(t.As<Napi::Number>().Int32Value());
        }
    }
    return rb;
}

} // namespace power
