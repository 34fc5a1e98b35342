#pragma once
// One generation request on a session: restore the cached prefix, prefill the rest of the
// prompt, sample the first token, then run speculative transactions (transaction.h) until
// end-of-generation, the token limit, a full context or a cancel. A cancel or failure leaves
// the session at its last committed transaction, ready to continue.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sampling.h"
#include "session_core.h"

namespace power {

struct generate_request {
    std::vector<llama_token> prompt;   // the whole conversation so far, as tokens
    int32_t         max_tokens = 256;  // emitted tokens at most
    sampling_params sampling;          // target sampler settings
};

// one emitted token
struct emitted_token {
    llama_token id;
    std::string piece;  // its bytes (may be part of a UTF-8 character)
    const char * origin; // "target" (autoregressive), later "accepted" / "correction" / "bonus"
};

// one round of the loop: what it proposed, accepted and emitted, and when
struct round_record {
    int32_t proposed = 0;
    int32_t accepted = 0;
    bool    replay   = false; // the round restored its checkpoint and replayed the accepted prefix
    int32_t clamp    = -1;    // proposals per round from now on after a replay (-1: not clamped)
    std::vector<emitted_token> tokens;
    int64_t start_us   = 0; // since the request started
    int64_t end_us     = 0;
    int64_t propose_us = 0; // step 2
    int64_t verify_us  = 0; // step 3
    int64_t commit_us  = 0; // steps 4 and 5
};

// a token with its bytes, for streaming
emitted_token make_emitted(const llama_vocab * vocab, llama_token id, const char * origin);

struct generate_result {
    std::string stop_reason;       // "eos" | "max-tokens" | "cancelled" | "context-full"
    int32_t prompt_tokens  = 0;    // tokens in the prompt
    int32_t reused_tokens  = 0;    // prompt tokens whose state was already in the context
    int64_t prefill_us     = 0;    // time to evaluate the rest of the prompt
    int64_t total_us       = 0;    // whole request
    int32_t generated      = 0;    // tokens emitted
    int32_t replays        = 0;    // guarded replays (at most one per request)
    int32_t clamp          = -1;   // the clamp in force at the end (-1: none)
};

// receives each round as soon as it is committed (called on the generation thread)
using round_sink = std::function<void(round_record &&)>;

// runs the request; throws std::runtime_error with a readable message on failure, after
// restoring the session to its last committed state
generate_result run_generation(session_core & core, const generate_request & req, const round_sink & sink);

} // namespace power
