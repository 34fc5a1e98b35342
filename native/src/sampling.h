#pragma once
// The target sampler chain, built from the request's sampling options.

#include <functional>
#include <string>
#include <vector>

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

// samples one row of logits: the chain's candidates buffer is `cur` (reused, n_vocab entries),
// the chain accepts the token (its RNG and penalty history advance exactly once)
llama_token sample_row(llama_sampler * sampler, const float * logits, int32_t n_vocab,
                       std::vector<llama_token_data> & cur);

// what step 4 of the transaction decided
struct row_decision {
    int32_t accepted = 0;     // proposals the target confirmed
    bool    eog      = false; // an end-of-generation token was sampled (not emitted)
};

// Step 4's rule, apart from where the logits live: samples rows 0..k in order and stops at the
// first row whose token differs from the proposal (a correction), after row k (a bonus), at an
// end-of-generation token, or when `budget` tokens are emitted. Rows after the stop are never
// sampled, so the sampler never advances for an unobserved suffix.
row_decision sample_through_first_mismatch(llama_sampler * sampler, const llama_vocab * vocab,
                                           const std::function<const float *(int32_t)> & row,
                                           const std::vector<llama_token> & proposals, int32_t budget,
                                           std::vector<llama_token> & emitted, std::vector<const char *> & origins,
                                           std::vector<llama_token_data> & cur);

} // namespace power
