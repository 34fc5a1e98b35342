#pragma once
// The target sampler chain, built from the request's sampling options.

#include <functional>
#include <string>
#include <vector>

#include "handles.h"

namespace power {

struct sampling_params {
    float temperature       = 0.0f;  // 0: greedy
    uint32_t seed           = 0;     // RNG seed for stochastic sampling
    int32_t top_k           = 40;    // 0: off
    float top_p             = 0.95f; // 1: off
    float min_p             = 0.05f; // 0: off
    float repeat_penalty    = 1.0f;  // 1: off
    int32_t repeat_last_n   = 64;    // tokens the penalties look back over
    float presence_penalty  = 0.0f;  // 0: off
    float frequency_penalty = 0.0f;  // 0: off
    // the chain runs in the target's graph, on the device that holds its output layer
    // (llama_set_sampler): only the sampled token comes back, not the row of logits
    bool backend = false;
};

// whether llama.cpp runs the whole chain on the backend for a context that outputs up to
// `rows_per_seq` rows per sequence; "" when it does, else what stays on the CPU
std::string backend_chain_problem(const sampling_params & p, int32_t rows_per_seq);

// returns an empty string when the values are usable, else what is wrong with them
std::string validate(const sampling_params & p);

// penalties -> (greedy | top-k -> top-p -> min-p -> temperature -> dist(seed)); the chain
// accepts each sampled token itself (llama_sampler_sample), so penalties see emitted tokens
sampler_ptr make_sampler(const llama_vocab * vocab, const sampling_params & p);

// The request's sampler as the context sees it: attached to the target's sequence 0 for backend
// sampling, detached again when the request ends (the chain dies with the request).
class backend_sampler_scope {
  public:
    backend_sampler_scope(llama_context * ctx, llama_sampler * chain, bool attach);
    ~backend_sampler_scope();
    backend_sampler_scope(const backend_sampler_scope &)             = delete;
    backend_sampler_scope & operator=(const backend_sampler_scope &) = delete;

  private:
    llama_context * ctx_;
    bool attached_;
};

// a chain of one greedy sampler: how proposers draft (backend sampling takes chains only)
sampler_ptr make_greedy_chain();

// samples one row of logits: the chain's candidates buffer is `cur` (reused; on return it holds
// what the chain kept, in its order), the chain accepts the token (its RNG and penalty history
// advance exactly once)
llama_token sample_row(llama_sampler * sampler, const float * logits, int32_t n_vocab, std::vector<llama_token_data> & cur);

// what step 4 of the transaction decided
struct row_decision {
    int32_t accepted = 0;     // proposals the target confirmed
    bool eog         = false; // an end-of-generation token was sampled (not emitted)
};

// Step 4's rule, apart from where rows are sampled: `draw(i)` samples row i and advances the
// sampler for its token. Draws rows 0..k in order and stops at the first row whose token differs
// from the proposal (a correction), after row k (a bonus), at an end-of-generation token, or when
// `budget` tokens are emitted. Rows after the stop are never drawn, so the sampler never
// advances for an unobserved suffix (on the backend, the rows' draws come from a copy of the
// RNG that only accepted tokens advance).
row_decision sample_through_first_mismatch(const llama_vocab * vocab, const std::function<llama_token(int32_t)> & draw,
                                           const std::vector<llama_token> & proposals, int32_t budget, std::vector<llama_token> & emitted,
                                           std::vector<const char *> & origins);

} // namespace power
