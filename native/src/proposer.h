#pragma once
// The proposer interface (docs/speculative-decoding.md "The transaction"): the transaction asks for guesses and reports
// what the target kept; it knows no strategy by name. Proposals are advisory: the target
// decides every emitted token, so a proposer can only change speed, never output.

#include <memory>
#include <string>
#include <vector>

#include "handles.h"
#include "llama.h"

namespace power {

class proposer {
  public:
    virtual ~proposer() = default;

    // the strategy name as the user asked for it ("none", "ngram", "draft-model", "mtp", ...)
    virtual const char * name() const = 0;

    // a request starts: `history` is every token whose state the target holds
    virtual void begin(const std::vector<llama_token> & history) = 0;

    // up to n_max tokens to follow history + anchor (anchor: the last emitted token, not yet
    // evaluated by the target). Writes into `out` (cleared first); may propose fewer.
    virtual void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) = 0;

    // the target evaluated `batch` (prefill or verify); proposers that read the target's
    // hidden rows (MTP) take them here
    virtual void observe_target(const llama_batch & batch) { (void)batch; }

    // the round kept the first `n_accepted` proposals
    virtual void accept(int n_accepted) { (void)n_accepted; }

    // the transaction failed or was replayed: drop any state derived after the last commit
    virtual void restore() {}

    // which member of a chain made the last proposal (-1: none, or not a chain)
    virtual int last_member() const { return -1; }

    // Where the last proposal came from, for a proposer that can tell (`suffix`), so that a round
    // shows why it drafted long or short: its source and how many of the first `n_proposed`
    // proposals (those verified) it expected the target to accept.
    struct draft_evidence {
        int32_t source  = -1;   // 0: this request (its prompt holds a chat's earlier turns), 1: the store of earlier replies; -1: not told
        double expected = -1.0; // expected accepted proposals (-1: not told)
    };
    virtual draft_evidence last_evidence(int n_proposed) const {
        (void)n_proposed;
        return {};
    }

    // the request's grammar for the next propose(): a copy standing after the anchor, the
    // proposer's to advance (nullptr: free text); `n_vocab`: the target's vocabulary size.
    // Proposers that pick greedily from a row of logits draft under it (grammar_guided_pick);
    // the others draft freely and the transaction cuts what the grammar refuses.
    void guide(llama_sampler * grammar, int32_t n_vocab) {
        guide_       = grammar;
        guide_vocab_ = n_vocab;
    }

    // the image positions the target holds below the anchor (0 without images): a proposer sees
    // the text positions only (proposer_history, session_core.h), and one that drafts on the
    // target's own memory (a Gemma 4 assistant) places its rows at text position + n_media
    void place(int32_t n_media) { n_media_ = n_media; }

  protected:
    int32_t n_media_       = 0;
    llama_sampler * guide_ = nullptr;
    int32_t guide_vocab_   = 0;
    std::vector<llama_token_data> guide_cur_; // candidates buffer for a pick under the grammar
};

// history + anchor: the sequence a proposer continues, into `seq` (a buffer kept across rounds)
inline void continued_sequence(const std::vector<llama_token> & history, llama_token anchor, std::vector<llama_token> & seq) {
    seq.assign(history.begin(), history.end());
    seq.push_back(anchor);
}

// proposes nothing: the autoregressive control, through the same transaction
std::unique_ptr<proposer> make_proposer_none();

// prompt-lookup n-gram proposer (ours): finds the longest recent suffix of the sequence earlier
// in prompt + history and proposes what followed it
std::unique_ptr<proposer> make_proposer_ngram(int n_min, int n_max_ngram);

// an ordered list of proposers (at least two): each round the first that drafts wins; every
// member follows the committed sequence (proposer_chain.cpp)
std::unique_ptr<proposer> make_proposer_chain(std::vector<std::unique_ptr<proposer>> members);

// earlier replies on one model, bounded in tokens, shared by its sessions (proposer_suffix.cpp)
struct suffix_store;

// the model's store, made on first use (read from `path` when one is given: the store's file,
// kept from then on; "": in memory only) and bounded to `limit` tokens from now on (the oldest
// replies go first); nullptr when `limit` is 0 and there is none
std::shared_ptr<suffix_store> model_suffix_store(const llama_model * model, size_t limit, const std::string & path);
// the model's store if it has one (nullptr: none)
std::shared_ptr<suffix_store> find_suffix_store(const llama_model * model);
size_t suffix_store_tokens(suffix_store & store);
// why the store's file is not in use or its last write failed ("": none)
std::string suffix_store_problem(suffix_store & store);
void suffix_store_clear(suffix_store & store);

// the suffix drafter: suffix automata over the request and over `store` (nullptr: the store is
// off for this session), the draft's length from the odds and this session's cost of a row
std::unique_ptr<proposer> make_proposer_suffix(std::shared_ptr<suffix_store> store);

} // namespace power

namespace power {

// How a proposer's own context runs: as the session's target does (its threads, threadpool and
// flash attention), stoppable by a cancel, and drafting where the target's output lives.
struct proposer_run_params {
    int32_t n_threads                = 0;                          // 0: llama.cpp's default
    ggml_threadpool * threadpool     = nullptr;                    // the session's pool (not owned; outlives the proposer)
    llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO; // as the target's context
    bool (*abort_callback)(void *)   = nullptr;                    // lets a cancel stop a proposer's long decode
    void * abort_data                = nullptr;
    bool backend_sampling            = false; // greedy drafting in the proposer's graph (llama_set_sampler)
    // p-min: a greedy drafter stops when its next token's probability (softmax of its row) falls
    // below this; 0: never (llama.cpp's --spec-draft-p-min)
    float p_min = 0.0f;
};

struct draft_context_params {
    uint32_t n_ctx   = 4096; // same as the target's
    uint32_t n_batch = 512;
    proposer_run_params run;
};

// the context a proposer decodes on, run as `run` says (a `cp` that brings its own abort callback
// keeps it), with the session's threadpool attached; throws std::runtime_error naming `what` when
// llama.cpp refuses
context_ptr open_proposer_context(llama_model * model, llama_context_params cp, const proposer_run_params & run, const std::string & what);

// a separate small model with the target's vocabulary, decoding greedily in its own context
// (throws std::runtime_error when the context cannot be created)
std::unique_ptr<proposer> make_proposer_draft(std::shared_ptr<llama_model> draft, const draft_context_params & params);

} // namespace power

namespace power {

// drafts greedily with the target's own NextN/MTP layers through an MTP context on `model`,
// which must have NextN layers and have been loaded with load_mtp. `target` is the session's
// context (not owned; it must outlive the proposer): from now on it also outputs the hidden
// rows the MTP head reads. `fr_vocab` > 0 (FR, the compact draft projection): the head projects
// onto its first fr_vocab rows only and drafts among those tokens. Throws std::runtime_error
// when the context cannot be created or this llama.cpp cannot project a part of the head.
std::unique_ptr<proposer> make_proposer_mtp(std::shared_ptr<llama_model> model, llama_context * target, const proposer_run_params & run,
                                            int32_t fr_vocab);

} // namespace power

namespace power {

struct common_proposer_params {
    std::string strategy; // eagle3 | dflash | dspark | mtp (a Gemma 4 assistant: draft-mtp) | ngram-simple | ngram-map-k | ngram-map-k4v |
                          // ngram-mod | ngram-cache
    int32_t k = 1;        // spec_draft_max: the draft length llama.cpp's proposer is made for
    std::shared_ptr<llama_model> draft; // the artifact (eagle3, dflash, dspark, the assistant); nullptr for the n-gram families
    proposer_run_params run;
};

// one of llama.cpp's own proposers (common_speculative, libllama-common) on the session's
// context `target` (not owned; it must outlive the proposer). The caller has checked the pair
// with common_proposer_problem (proposer_common_checks.h). Throws std::runtime_error when
// llama.cpp cannot create it.
std::unique_ptr<proposer> make_proposer_common(const common_proposer_params & params, llama_context * target);

} // namespace power
