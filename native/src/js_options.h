// Reading an options object from JS, with one policy for every native entry point: an absent
// option (missing, undefined or null) takes its default; a present one of the wrong type or out
// of range is refused with a TypeError or RangeError that names it. Nothing is silently dropped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <napi.h>

#include "sampling.h"

namespace power {

// a finite number, or the fallback when absent
double number_option(const Napi::Object & opts, const char * key, double fallback);
// an integer in [lo, hi], or the fallback when absent
int64_t integer_option(const Napi::Object & opts, const char * key, int64_t fallback, int64_t lo, int64_t hi);
bool bool_option(const Napi::Object & opts, const char * key, bool fallback);
std::optional<std::string> string_option(const Napi::Object & opts, const char * key);
// one of `allowed`, or nullopt when absent
std::optional<std::string> choice_option(const Napi::Object & opts, const char * key, const std::vector<std::string> & allowed);
std::optional<Napi::Array> array_option(const Napi::Object & opts, const char * key);
std::optional<Napi::Function> function_option(const Napi::Object & opts, const char * key);
// the entries of an array option, each a string
std::vector<std::string> string_list(const Napi::Array & array, const char * key);
// sampling's reasoningBudget {tokens, start, ends, message, prefill}, tokenized on `vocab` as
// llama-server does (off when absent); validate() says whether the tags tokenize
reasoning_budget_params reasoning_budget_option(const Napi::Object & opts, const char * key, const llama_vocab * vocab);

} // namespace power
