#include "js_options.h"

#include <cmath>

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

} // namespace power
