// draft-model proposer: a second GGUF that shares the target's vocabulary. Its context is kept
// in step with the target's committed sequence by common prefix: every round it evaluates
// exactly the tokens it has not seen (after a fully accepted round, the accepted tail and the
// anchor), then drafts greedily.
#include <algorithm>
#include <stdexcept>

#include "handles.h"
#include "proposer.h"
#include "sampling.h"

namespace power {
namespace {

class proposer_draft : public proposer {
  public:
    proposer_draft(model_ref model, const draft_context_params & p) : model_(std::move(model)), batch_(p.n_batch, 1) {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = p.n_ctx;
        cp.n_batch              = p.n_batch;
        cp.n_ubatch             = p.n_batch;
        cp.n_seq_max            = 1;
        ctx_                    = open_proposer_context(model_.get(), cp, p.run, "the draft model's context");
        greedy_                 = make_greedy_chain();
        backend_                = p.run.backend_sampling;
        p_min_                  = p.run.p_min;
        n_vocab_                = llama_vocab_n_tokens(llama_model_get_vocab(model_.get()));
        if (p.run.backend_sampling && !llama_set_sampler(ctx_.get(), 0, greedy_.get())) {
            throw std::runtime_error("llama.cpp could not attach greedy sampling to the draft model's backend");
        }
    }

    ~proposer_draft() override {
        llama_set_sampler(ctx_.get(), 0, nullptr); // before the chain goes
    }

    const char * name() const override { return "draft-model"; }

    void begin(const std::vector<llama_token> &) override {}

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        continued_sequence(history, anchor, seq_);
        if (n_max <= 0 || seq_.size() + n_max > llama_n_ctx(ctx_.get())) {
            return;
        }
        if (!catch_up()) {
            return;
        }
        for (int i = 0; i < n_max; i++) {
            // the backend's token when the chain is attached, else argmax over the row
            llama_token t = llama_sampler_sample(greedy_.get(), ctx_.get(), -1);
            if (guide_) {
                const float * row = backend_ ? nullptr : llama_get_logits_ith(ctx_.get(), -1);
                t                 = grammar_guided_pick(guide_, t, row, std::min(guide_vocab_, n_vocab_), guide_cur_);
                if (t == LLAMA_TOKEN_NULL) {
                    break;
                }
            }
            if (!backend_ && below_p_min(llama_get_logits_ith(ctx_.get(), -1), n_vocab_, t, p_min_)) {
                break; // not sure enough: the draft ends here
            }
            out.push_back(t);
            if (i + 1 == n_max) {
                break;
            }
            batch_.clear();
            batch_.add(t, static_cast<llama_pos>(in_kv_.size()), true);
            if (llama_decode(ctx_.get(), batch_.get()) != 0) {
                forget_from(in_kv_.size());
                break;
            }
            in_kv_.push_back(t);
        }
    }

    void restore() override {
        // the draft's own KV is reconciled by common prefix on the next proposal
    }

  private:
    // makes the draft's KV hold exactly seq_ (logits on its last token); false on failure
    bool catch_up() {
        size_t keep    = 0;
        const size_t n = std::min(in_kv_.size(), seq_.size());
        while (keep < n && in_kv_[keep] == seq_[keep]) {
            keep++;
        }
        if (keep == seq_.size()) {
            keep--; // re-evaluate the last token for its logits
        }
        forget_from(keep);
        while (in_kv_.size() < seq_.size()) {
            const size_t from = in_kv_.size();
            const size_t to   = std::min(seq_.size(), from + static_cast<size_t>(batch_.capacity()));
            batch_.clear();
            for (size_t i = from; i < to; i++) {
                batch_.add(seq_[i], static_cast<llama_pos>(i), i + 1 == seq_.size());
            }
            if (llama_decode(ctx_.get(), batch_.get()) != 0) {
                forget_from(from);
                return false;
            }
            in_kv_.insert(in_kv_.end(), seq_.begin() + from, seq_.begin() + to);
        }
        return true;
    }

    void forget_from(size_t pos) {
        if (pos >= in_kv_.size()) {
            // rows past what we track may remain after a failed decode
            llama_memory_seq_rm(llama_get_memory(ctx_.get()), 0, static_cast<llama_pos>(pos), -1);
            return;
        }
        if (!llama_memory_seq_rm(llama_get_memory(ctx_.get()), 0, static_cast<llama_pos>(pos), -1)) {
            llama_memory_clear(llama_get_memory(ctx_.get()), true);
            pos = 0;
        }
        in_kv_.resize(pos);
    }

    model_ref model_;
    context_ptr ctx_;
    sampler_ptr greedy_;
    bool backend_    = false; // the greedy chain runs in the draft's graph: no row of logits comes back
    float p_min_     = 0.0f;  // p-min (proposer_run_params; never with backend_: it reads the row)
    int32_t n_vocab_ = 0;
    batch_owner batch_;
    std::vector<llama_token> in_kv_; // tokens whose state the draft context holds
    std::vector<llama_token> seq_;   // history + anchor, reused across rounds
};

} // namespace

std::unique_ptr<proposer> make_proposer_draft(model_ref draft, const draft_context_params & params) {
    return std::make_unique<proposer_draft>(std::move(draft), params);
}

} // namespace power
