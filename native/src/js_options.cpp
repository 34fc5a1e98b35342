#include "js_options.h"

#include <cmath>

namespace power {
namespace {

bool absent(const Napi::Object & opts, const char * key) {
    if (!opts.Has(key)) {
        return true;
    }
    Napi::Value v = opts.Get(key);
    return v.IsUndefined() || v.IsNull();
}

} // namespace

double number_option(const Napi::Object & opts, const char * key, double fallback) {
    if (absent(opts, key)) {
        return fallback;
    }
    Napi::Value v = opts.Get(key);
    if (!v.IsNumber() || !std::isfinite(v.As<Napi::Number>().DoubleValue())) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be a finite number");
    }
    return v.As<Napi::Number>().DoubleValue();
}

int64_t integer_option(const Napi::Object & opts, const char * key, int64_t fallback, int64_t lo, int64_t hi) {
    if (absent(opts, key)) {
        return fallback;
    }
    const double n = number_option(opts, key, 0);
    if (n != std::floor(n) || n < static_cast<double>(lo) || n > static_cast<double>(hi)) {
        throw Napi::RangeError::New(opts.Env(),
                                    std::string(key) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int64_t>(n);
}

bool bool_option(const Napi::Object & opts, const char * key, bool fallback) {
    if (absent(opts, key)) {
        return fallback;
    }
    Napi::Value v = opts.Get(key);
    if (!v.IsBoolean()) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be a boolean");
    }
    return v.As<Napi::Boolean>().Value();
}

std::optional<std::string> string_option(const Napi::Object & opts, const char * key) {
    if (absent(opts, key)) {
        return std::nullopt;
    }
    Napi::Value v = opts.Get(key);
    if (!v.IsString()) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be a string");
    }
    return v.As<Napi::String>().Utf8Value();
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
    if (absent(opts, key)) {
        return std::nullopt;
    }
    Napi::Value v = opts.Get(key);
    if (!v.IsArray()) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be an array");
    }
    return v.As<Napi::Array>();
}

std::optional<Napi::Function> function_option(const Napi::Object & opts, const char * key) {
    if (absent(opts, key)) {
        return std::nullopt;
    }
    Napi::Value v = opts.Get(key);
    if (!v.IsFunction()) {
        throw Napi::TypeError::New(opts.Env(), std::string(key) + " must be a function");
    }
    return v.As<Napi::Function>();
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

} // namespace power
