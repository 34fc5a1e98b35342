#pragma once
// One generation request on a session: restore the cached prefix, prefill the rest of the
// prompt, sample the first token, then run speculative transactions (transaction.h) until
// end-of-generation, the token limit, a full context or a cancel. A cancel or failure leaves
// the session at its last committed transaction, ready to continue.

#include <cstdint>
#include <string>
#include <vector>

#include "sampling.h"
#include "session_core.h"

namespace power {

struct generate_request {
    std::vector<llama_token> prompt; // the whole conversation so far, as tokens
    int32_t max_tokens = 256;        // emitted tokens at most
    sampling_params sampling;        // target sampler settings
    int64_t t0_us = 0;               // when the request started (llama_time_us; 0: when run_generation starts), so
                                     // that the times count an image's evaluation before it (session.cpp)
};

// Rounds as the generation thread records them: a flat layout whose buffers grow during the
// first rounds and are then reused, so recording a round allocates nothing. Batches of rounds
// cross to JS as they are (session.cpp), in order.
struct round_batch {
    // per round in `numbers`, in this order
    enum field {
        proposed,
        accepted,
        replay,
        clamp,
        start_us,
        end_us,
        propose_us,
        verify_us,
        commit_us,
        n_tokens,
        member,
        source,   // where the draft came from (proposer::draft_evidence; -1: not told)
        expected, // the proposals its proposer expected accepted (-1: not told)
        n_fields
    };
    // token origins in `origins`
    enum origin : uint8_t { target, accepted_proposal, correction, bonus };

    std::vector<double> numbers;      // n_fields per round (replay 0/1, clamp -1: none, times in µs, member, source, expected -1: none)
    std::vector<int32_t> ids;         // emitted token ids of every round, in order
    std::vector<uint8_t> origins;     // per token
    std::vector<uint8_t> bytes;       // the tokens' pieces (a piece may be part of a UTF-8 character)
    std::vector<uint32_t> piece_ends; // per token: where its piece ends in `bytes`
    // when the request asked for log-probabilities (else empty): per token its own, and n_top
    // entries per token of the row's most likely tokens, with their pieces
    std::vector<float> logprobs;
    std::vector<int32_t> top_ids;
    std::vector<float> top_logprobs;
    std::vector<uint8_t> top_bytes;
    std::vector<uint32_t> top_piece_ends;

    size_t rounds() const { return numbers.size() / n_fields; }
    void clear();
    // appends a token and its piece
    void add_token(const llama_vocab * vocab, llama_token id, origin o);
    // the log-probabilities of the token added last
    void add_probs(const llama_vocab * vocab, const row_probs & probs);
    // drops tokens no recorded round names (a round that failed halfway through recording)
    void drop_partial_round();
    // appends a round's record; its tokens must have been added just before (n_tok of them).
    // member: which member of a chain drafted the round (-1: none drafted, or not a chain);
    // source, expected: where the draft came from and how much of it was expected accepted (-1: not told)
    void add_round(int32_t proposed, int32_t accepted, bool replay, int32_t clamp, int64_t start_us, int64_t end_us, int64_t propose_us,
                   int64_t verify_us, int64_t commit_us, int32_t n_tok, int32_t member = -1, int32_t source = -1, double expected = -1.0);
};

// receives each round as soon as it is committed (generation thread)
class round_sink {
  public:
    virtual ~round_sink() = default;
    // the batch the next round is recorded into
    virtual round_batch & open() = 0;
    // the round was recorded; `first`: it carries the reply's first token
    virtual void close(bool first) = 0;
    // hands over the rounds recorded so far (a sink that delivers each round at close has none)
    virtual void flush() {}
};

struct generate_result {
    std::string stop_reason;       // "eos" | "max-tokens" | "cancelled" | "context-full"
    int32_t prompt_tokens    = 0;  // tokens in the prompt
    int32_t reused_tokens    = 0;  // prompt tokens whose state was already in the context
    int64_t prefill_us       = 0;  // time to evaluate the rest of the prompt
    int64_t total_us         = 0;  // whole request
    int32_t generated        = 0;  // tokens emitted
    int32_t replays          = 0;  // guarded replays (at most one per request)
    int32_t clamp            = -1; // the clamp in force at the end (-1: none)
    int32_t grammar_cut      = 0;  // proposals dropped before verification because the grammar refused them
    int32_t images_encoded   = -1; // image chunks run through the projector (not kept from the last request); -1: no images
    int32_t reasoning_forced = -1; // thinking blocks the reasoning budget ended (its end forced); -1: no budget
};

// runs the request; throws std::runtime_error with a readable message on failure, after
// restoring the session to its last committed state
generate_result run_generation(session_core & core, const generate_request & req, round_sink & sink);

} // namespace power
