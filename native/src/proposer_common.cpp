// llama.cpp's own proposers (common_speculative, through libllama-common) behind our
// proposer interface: the draft artifacts that read the target's hidden states (draft-eagle3,
// draft-dflash, draft-dspark, and draft-mtp for a Gemma 4 assistant beside a Gemma 4 target:
// strategy `mtp` with a draft) and llama.cpp's n-gram families (ngram-simple, ngram-map-k,
// ngram-map-k4v, ngram-mod, ngram-cache). One adapter wraps a common_speculative of exactly one
// type, driven the way llama-server drives it (its server context):
//   - the draft context (artifacts only) is created against the target: ctx_other = target,
//     the target's n_ctx, no recurrent snapshots, the outputs a block draft needs; an MTP
//     context (LLAMA_CONTEXT_TYPE_MTP) for the Gemma 4 assistant, whose KV cache is views of
//     the target's: it writes no cell (llama.cpp's shared cache ignores its seq_rm, so the
//     rollbacks below leave the target's cells alone), drafts every step at the anchor's
//     position, and process() only keeps the target's hidden rows;
//   - every target decode (prefill chunks, verify, replay) goes to common_speculative_process
//     right after it, while the target's extracted layer rows belong to that batch;
//   - a proposal is common_speculative_draft with id_last = the anchor, n_past = the committed
//     length and the committed tokens as the prompt; common_speculative_begin runs once per
//     request, before the first proposal (the prompt is evaluated by then, as in the server);
//   - the round's kept proposals go to common_speculative_accept (only after a non-empty
//     draft, as the server does: an empty one has nothing to account for).
//
// Rollback is position-driven, as for the MTP proposer: the draft KV never keeps rows at or
// past the target's next position. Before and after each draft the rows from n_past on (the
// noise block of DFlash, EAGLE3's draft chain, a rejected tail) are dropped, and before each
// observed batch the rows from its first position on. What llama.cpp keeps outside the KV is
// EAGLE3's deferred boundary (the last row's encoder output, completed by the next token): it
// is rebased by accept() after a verify, and on a recurrent or hybrid target llama.cpp exposes
// it (common_speculative_get_state), so a round saves it before drafting and restore() puts it
// back. On an attention-only target a failed round never reaches process() (the verify decode
// fails before it, and replays only happen on recurrent targets), so that state is untouched.
// After images, positions are the text view's (proposer_history, session_core.h): the draft KV
// holds the text rows only, the text after an image right after the text before it; the Gemma 4
// assistant, on the target's own cells, drafts at the target's position instead (place()).
// Proposals are advisory: whatever this state is, the target decides every emitted token.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "handles.h"
#include "llama-ext.h" // llama_get_ctx_other
#include "proposer.h"
#include "proposer_common_checks.h"
#include "speculative.h"

namespace power {
namespace {

struct common_spec_deleter {
    void operator()(common_speculative * s) const { common_speculative_free(s); }
};
using common_spec_ptr = std::unique_ptr<common_speculative, common_spec_deleter>;

// llama.cpp's defaults for the type, with the draft length set to K: a proposal is up to K
// tokens. p_min = 0: llama.cpp's default, no confidence cut (a DSpark confidence head is not
// read); n_min = 0 except where the family has its own minimum, clamped to K. ngram-simple keeps
// its m-gram length, as llama-server does: it drafts only a match followed by at least its key
// length (size_n) of tokens, so an m-gram shorter than the key never drafts; its draft is cut to
// the round's n_max (dp.n_max) like any other.
common_params_speculative speculative_params(common_speculative_type type, int32_t k, llama_context * target, llama_context * draft,
                                             bool backend_sampling) {
    common_params_speculative p;
    p.draft.backend_sampling = backend_sampling;
    p.types                  = {type};
    p.draft.n_max            = k;
    p.draft.n_min            = 0;
    p.draft.p_min            = 0.0f;
    p.draft.ctx_tgt          = target;
    p.draft.ctx_dft          = draft;
    const uint16_t m         = static_cast<uint16_t>(k);
    p.ngram_map_k.size_m     = m;
    p.ngram_map_k4v.size_m   = m;
    p.ngram_mod.n_max        = k;
    p.ngram_mod.n_min        = std::min(p.ngram_mod.n_min, k);
    return p;
}

class proposer_common : public proposer {
  public:
    proposer_common(const common_proposer_params & p, llama_context * target) :
        name_(p.strategy), type_(p.strategy == "mtp" ? COMMON_SPECULATIVE_TYPE_DRAFT_MTP : common_type_of(p.strategy)), k_(p.k),
        draft_model_(p.draft), target_(target) {
        if (type_ == COMMON_SPECULATIVE_TYPE_COUNT) {
            throw std::runtime_error("strategy '" + p.strategy + "' is not one of llama.cpp's proposers");
        }
        if (is_artifact(type_)) {
            create_draft_context(p);
        }
        common_params_speculative sp = speculative_params(type_, p.k, target, ctx_.get(), p.run.backend_sampling);
        sp.draft.p_min               = p.run.p_min; // the session's p-min (0: as above); llama.cpp's eagle3, dflash, dspark read it
        try {
            spec_.reset(common_speculative_init(sp, 1));
        } catch (const std::exception & e) {
            throw std::runtime_error(std::string("llama.cpp refused the ") + p.strategy + " proposer: " + e.what());
        }
        if (!spec_) {
            throw std::runtime_error(std::string("llama.cpp created no ") + p.strategy + " proposer");
        }
        recurrent_target_ = llama_model_is_recurrent(llama_get_model(target)) || llama_model_is_hybrid(llama_get_model(target));
    }

    ~proposer_common() override {
        // the implementation detaches its samplers from the draft context: free it first
        spec_.reset();
        ctx_.reset();
    }

    const char * name() const override { return name_.c_str(); }

    void begin(const std::vector<llama_token> &) override {
        begun_      = false;
        last_draft_ = 0;
    }

    void observe_target(const llama_batch & b) override {
        if (b.n_tokens <= 0) {
            return;
        }
        drop_draft_rows_from(b.pos[0]); // the target writes these positions anew
        if (!common_speculative_process(spec_.get(), b)) {
            // a draft decode failed (cancelled or out of room): the draft side starts over
            // from the next batch; proposals only get worse until it has caught up
            drop_draft_rows_from(0);
        }
    }

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        last_draft_ = 0;
        // the draft's own memory is numbered as the history (the text positions); a draft on the
        // target's memory (the Gemma 4 assistant) drafts at the target's position, past the images
        const llama_pos n_past = static_cast<llama_pos>(history.size()) + (shares_target_memory_ ? n_media_ : 0);
        // a block draft decodes K + 1 rows whatever this round schedules; they must fit
        if (n_max <= 0 || anchor < 0 || (ctx_ && static_cast<size_t>(n_past) + std::max(n_max, k_) + 1 > llama_n_ctx(ctx_.get()))) {
            return;
        }
        if (!begun_) {
            common_speculative_begin(spec_.get(), 0, history);
            begun_ = true;
        }
        if (recurrent_target_) {
            saved_state_ok_ = common_speculative_get_state(spec_.get(), 0, saved_state_);
        }
        drop_draft_rows_from(n_past);
        common_speculative_draft_params & dp = common_speculative_get_draft_params(spec_.get(), 0);
        dp.drafting                          = true;
        dp.n_max                             = n_max;
        dp.n_past                            = n_past;
        dp.id_last                           = anchor;
        dp.prompt                            = &history;
        dp.result                            = &draft_;
        draft_.clear();
        drafting_ = true;
        common_speculative_draft(spec_.get());
        drafting_ = false;
        // the draft chain or noise block is not part of the committed sequence
        drop_draft_rows_from(n_past);
        const size_t n = std::min(draft_.size(), static_cast<size_t>(n_max));
        out.assign(draft_.begin(), draft_.begin() + n);
        last_draft_ = static_cast<int>(n);
    }

    void accept(int n_accepted) override {
        if (last_draft_ <= 0) {
            return;
        }
        const int n = std::max(0, std::min(n_accepted, last_draft_));
        common_speculative_accept(spec_.get(), 0, static_cast<uint16_t>(n));
        last_draft_ = 0;
    }

    void restore() override {
        if (recurrent_target_ && saved_state_ok_) {
            common_speculative_set_state(spec_.get(), 0, saved_state_);
        }
        last_draft_ = 0;
    }

  private:
    static bool is_artifact(common_speculative_type t) {
        return t == COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3 || t == COMMON_SPECULATIVE_TYPE_DRAFT_DFLASH ||
               t == COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK || t == COMMON_SPECULATIVE_TYPE_DRAFT_MTP;
    }

    // as common_speculative_init_from_params + common_base_params_to_speculative do for the server
    void create_draft_context(const common_proposer_params & p) {
        if (!draft_model_) {
            throw std::runtime_error("strategy '" + p.strategy + "' needs a draft artifact");
        }
        llama_context_params cp = llama_context_default_params();
        if (type_ == COMMON_SPECULATIVE_TYPE_DRAFT_MTP) {
            cp.ctx_type = LLAMA_CONTEXT_TYPE_MTP; // as common_speculative_init_result does for draft-mtp
        }
        cp.ctx_other = target_;
        cp.n_ctx     = llama_n_ctx(target_);
        cp.n_batch   = llama_n_batch(target_);
        cp.n_ubatch  = llama_n_ubatch(target_);
        cp.n_seq_max = 1;
        cp.n_rs_seq  = 0;
        // a block draft (DFlash, DSpark) reads the anchor and every noise row in one decode,
        // sampled on the backend where it can; EAGLE3 reads one row per step
        const bool block         = type_ == COMMON_SPECULATIVE_TYPE_DRAFT_DFLASH || type_ == COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK;
        const uint32_t per_seq   = block ? static_cast<uint32_t>(std::max(1, p.k + 1)) : 1u;
        cp.n_outputs_max         = per_seq;
        cp.n_outputs_max_per_seq = per_seq;
        // a cancel may stop a draft (proposals are advisory), never the processing of a target
        // batch: those rows are being committed, and a half-processed batch would leave the
        // draft side out of step with the target for the rest of the conversation
        user_abort_       = p.run.abort_callback;
        user_abort_data_  = p.run.abort_data;
        cp.abort_callback = [](void * self) {
            return static_cast<proposer_common *>(self)->draft_aborted();
        };
        cp.abort_callback_data = this;
        ctx_                   = open_proposer_context(draft_model_.get(), cp, p.run, "the " + p.strategy + " draft context");
        // as llama.cpp's draft-mtp tells a head on the target's KV cells (EAGLE3 and DFlash
        // artifacts without their own embeddings name the target too, for its weights only)
        shares_target_memory_ = type_ == COMMON_SPECULATIVE_TYPE_DRAFT_MTP && llama_get_ctx_other(ctx_.get()) == target_;
    }

    bool draft_aborted() const { return drafting_ && user_abort_ && user_abort_(user_abort_data_); }

    void drop_draft_rows_from(llama_pos pos) {
        if (!ctx_) {
            return;
        }
        llama_memory_t mem = llama_get_memory(ctx_.get());
        if (!llama_memory_seq_rm(mem, 0, std::max<llama_pos>(pos, 0), -1)) {
            llama_memory_clear(mem, true); // an attention-only draft cuts anywhere; never expected
        }
    }

    std::string name_;
    common_speculative_type type_;
    int32_t k_;              // K, the draft length the implementation was made for
    model_ref draft_model_;  // keeps the artifact alive as long as its context
    llama_context * target_; // not owned: the session's context outlives the proposer
    context_ptr ctx_;        // the artifact's context (none for the n-gram families)
    common_spec_ptr spec_;

    bool (*user_abort_)(void *) = nullptr; // the session's cancel check
    void * user_abort_data_     = nullptr;
    bool drafting_              = false; // inside common_speculative_draft: a cancel may stop it

    bool shares_target_memory_ = false; // the draft reads the target's KV cells (a Gemma 4 assistant)
    bool recurrent_target_     = false;
    bool begun_                = false;
    int last_draft_            = 0; // tokens proposed this round (0: nothing to accept)
    std::vector<llama_token> draft_;
    std::vector<uint8_t> saved_state_;
    bool saved_state_ok_ = false;
};

} // namespace

std::unique_ptr<proposer> make_proposer_common(const common_proposer_params & params, llama_context * target) {
    return std::make_unique<proposer_common>(params, target);
}

} // namespace power
