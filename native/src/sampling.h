#pragma once
// The target sampler chain, built from the request's sampling options.

#include <string>

#include "handles.h"

namespace power {

struct sampling_params {
    float    temperature    = 0.0f;  // 0: greedy
    uint32_t seed           = 0;     // RNG seed for stochastic sampling
    int32_t  top_k          = 40;    // 0: off
    float    top_p          = 0.95f; // 1: off
    float    min_p          = 0.05f; // 0: off
    float    repeat_penalty = 1.0f;  // 1: off
    int32_t  repeat_last_n  = 64;    // tokens the penalties look back over
    float    presence_penalty  = 0.0f; // 0: off
    float    frequency_penalty = 0.0f; // 0: off
};

// returns an empty string when the values are usable, else what is wrong with them
std::string validate(const sampling_params & p);

// penalties -> (greedy | top-k -> top-p -> min-p -> temperature -> dist(seed)); the chain
// accepts each sampled token itself (llama_sampler_sample), so penalties see emitted tokens
sampler_ptr make_sampler(const llama_vocab * vocab, const sampling_params & p);

} // namespace power
