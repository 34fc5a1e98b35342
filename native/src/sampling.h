#pragma once
// The target sampler chain, built from the request's sampling options.

#include <functional>
#include <string>
#include <vector>

#include "handles.h"

namespace power {

// The reasoning budget as llama-server gives it to common_sampler_init: the tags tokenized with
// special tokens parsed, `forced` the budget message's tokens and the first end tag's, `prefill`
// the generation prompt's tokens, which the budget reads before the reply (a generation prompt that
// opens the thinking starts it counting). The texts are kept for the errors that name them.
struct reasoning_budget_params {
    int32_t tokens = 0;
    std::string start_text;
    std::vector<std::string> end_texts;
    std::vector<llama_token> start;
    std::vector<std::vector<llama_token>> ends;
    std::vector<llama_token> forced;
    std::vector<llama_token> prefill;
    bool on() const { return !start_text.empty(); }
};

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
    // a GBNF grammar the reply must follow (root rule "root"); empty: free text
    std::string grammar;
    // lazy: the grammar applies once one of the patterns matches the reply's text or one of the
    // tokens is emitted (llama_sampler_init_grammar_lazy_patterns), free text before
    bool grammar_lazy = false;
    std::vector<std::string> grammar_trigger_patterns;
    std::vector<llama_token> grammar_trigger_tokens;
    // tokens the grammar accepts before the reply (the template's generation prompt)
    std::vector<llama_token> grammar_prefill;
    // llama.cpp's reasoning budget (common_reasoning_budget_init): none when `start` is empty
    reasoning_budget_params reasoning_budget;
    // log-probabilities of each emitted token from the row it was drawn from: -1 off, else the
    // drawn token's and those of the row's n_probs most likely tokens (at most max_probs)
    int32_t n_probs = -1;
};

constexpr int32_t max_probs = 20;

// One row's log-probabilities (the log-softmax of its raw logits, before any sampler): the
// drawn token's, and the `top` most likely tokens as {id, logprob} (most likely first; ties:
// the lower id first).
struct row_probs {
    float chosen = 0.0f;
    std::vector<std::pair<llama_token, float>> top;
};
void row_logprobs(const float * logits, int32_t n_vocab, llama_token chosen, int32_t n_top, row_probs & out);

// llama.cpp's JSON-schema-to-GBNF conversion (the one llama-server uses); throws
// std::invalid_argument saying what is wrong with the schema
std::string grammar_from_json_schema(const std::string & schema_json);

// "" when llama.cpp's grammar parser takes `grammar` on this vocabulary, else why not
std::string grammar_problem(const llama_vocab * vocab, const std::string & grammar);

// whether llama.cpp runs the whole chain on the backend for a context that outputs up to
// `rows_per_seq` rows per sequence; "" when it does, else what stays on the CPU
std::string backend_chain_problem(const sampling_params & p, int32_t rows_per_seq);

// returns an empty string when the values are usable, else what is wrong with them
std::string validate(const sampling_params & p);

// The request's target sampler. The chain: penalties -> (greedy | top-k -> top-p -> min-p ->
// temperature -> dist(seed)). The grammar, when there is one, is kept beside the chain as
// llama-server keeps it: the chain draws, the grammar checks only the drawn token, and only a
// token it refuses makes the row drawn again with the grammar applied first. One rule per row
// for every run, so a speculative row draws what the autoregressive one draws.
//
// The reasoning budget, when there is one, is held beside them as common_sampler holds it: applied
// to every row first (while it forces, only the forced token is left), advanced for every emitted
// token, and a lazy grammar is held off while it counts or forces (a tool-call trigger inside the
// thinking does not start the grammar), the end sequence replayed into the grammar once the
// thinking is done. It advances only for emitted tokens, like the rest, so the forced end falls
// on the same token in a speculative run and its control.
struct target_sampler {
    sampler_ptr chain;
    sampler_ptr grammar;         // null: free text
    sampler_ptr budget;          // null: no reasoning budget
    bool grammar_lazy   = false; // the grammar waits for a trigger
    bool plain_greedy   = false; // the chain is argmax alone (no penalties)
    int32_t forced_ends = 0;     // thinking blocks the budget ended (forced its end sequence)

    // the chain is what backend sampling attaches to the graph (no grammar there)
    llama_sampler * chain_ptr() const { return chain.get(); }
    // a copy in the same state (RNG, penalty history, grammar stacks, budget)
    target_sampler clone() const;
    // whether the grammar checks the next row (llama.cpp's grammar_should_apply)
    bool grammar_applies() const;
    // advances the budget, the RNG history, the penalties and the grammar for an emitted token
    void accept(llama_token token);
};

target_sampler make_sampler(const llama_vocab * vocab, const sampling_params & p);

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

// p-min's test for a greedy drafter: true when `token`'s probability in the row (softmax of its
// `n_vocab` logits) is below p_min; false when p_min <= 0 (p-min off) or there is no row
bool below_p_min(const float * logits, int32_t n_vocab, llama_token token, float p_min);

// how many of `proposals` the grammar admits in a row from where it stands (the first it refuses
// and every one after it could never be emitted); an end-of-generation proposal ends the run
size_t grammar_admitted_prefix(const target_sampler & sampler, const std::vector<llama_token> & proposals, const llama_vocab * vocab);

// A proposer's greedy pick under the request's grammar. `walk`: the grammar as it stands after
// the anchor and the tokens drafted so far (nullptr: free text), advanced for the pick. `token`:
// the proposer's own greedy pick; `logits`: the row it came from (nullptr when a backend drew it),
// whose first `n_vocab` entries are the target's vocabulary. Returns `token` when the grammar
// allows it, else the row's best token the grammar allows, else LLAMA_TOKEN_NULL (nothing to
// draft under the grammar from here).
llama_token grammar_guided_pick(llama_sampler * walk, llama_token token, const float * logits, int32_t n_vocab,
                                std::vector<llama_token_data> & cur);

// samples one row of logits: the chain's candidates buffer is `cur` (reused; on return it holds
// what the chain kept, in its order), then the sampler accepts the token (its RNG, penalty
// history and grammar advance exactly once)
llama_token sample_row(target_sampler & sampler, const float * logits, int32_t n_vocab, std::vector<llama_token_data> & cur);

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
