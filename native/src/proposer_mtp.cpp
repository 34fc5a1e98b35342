// MTP proposer: drafts with the target's own NextN/MTP layers (e.g. Qwen3.5's one NextN block)
// through a second context on the same model (LLAMA_CONTEXT_TYPE_MTP), after llama.cpp's
// common_speculative_impl_draft_mtp (llama.cpp's common_speculative), single-head mode.
//
// The NextN block predicts the token at p + 2 from the pair (h_p, x_{p+1}): the target's
// last hidden row (before the output head: "h_nextn") at position p and the embedding of the
// token at p + 1. Its context therefore holds one row per target position p + 1, built from
// the target's rows: every target decode (prefill chunks, verify, replay) reaches
// observe_target, which keeps the batch's tokens and hidden rows (the "pending" batch).
// Those rows are mirrored into the MTP context, shifted right by one, once they are known to
// be committed: the next observed batch starts past them, or the next proposal's history
// covers them. A proposal mirrors the committed part of the pending batch and the anchor
// (paired with h_{n_past-1}) in one decode, which also yields the first guess; each further
// guess feeds the head's own hidden row forward. Unlike llama.cpp, which mirrors every verify
// row and then drops the rejected ones, this saves one MTP decode per round and never
// evaluates a rejected row; the rows the MTP context holds are the same.
//
// The state is position-driven: every observed batch first drops the MTP rows at and after
// its first position, and every proposal drops its draft rows, so the MTP context holds rows
// for the target's committed history only. That is why accept() and restore() have nothing to
// do: a replay re-evaluates the kept rows and observe_target replaces the pending batch with
// them; a failed round leaves the target at an earlier position, and the next proposal or
// batch mirrors only what lies below it. After images, positions are the text view's
// (proposer_history, session_core.h): the MTP context holds the text rows only, and the first
// token after an image pairs with the last hidden row before it. Proposals are advisory:
// whatever this state is, the target decides every emitted token.
//
// FR, the compact draft projection (the seed's spec_mtp_fr_vocab_size): the head's LM head
// projects onto its first N rows only (scripts/native/patches/llama-mtp-fr-vocab.patch), so a
// draft step multiplies N rows instead of the whole vocabulary, and drafts only among those N
// tokens. Whether that pays depends on how much of the text lies among them; it cannot change
// the output, which the target decides.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "handles.h"
#include "llama-ext.h" // staging C++ API: llama_set_embeddings_nextn, llama_get_embeddings_nextn_ith
#include "proposer.h"
#include "sampling.h"

namespace power {
namespace {

// A batch that carries both token ids and hidden rows (the MTP graph reads both).
// llama_batch_init allocates one or the other, so the storage is ours and the batch points in.
class mtp_batch {
  public:
    mtp_batch(int32_t capacity, int32_t n_embd) :
        capacity_(capacity), n_embd_(n_embd), token_(capacity), embd_(static_cast<size_t>(capacity) * n_embd), pos_(capacity),
        n_seq_id_(capacity, 1), seq_id_storage_(capacity, 0), seq_id_(capacity + 1, nullptr), logits_(capacity, 0) {
        for (int32_t i = 0; i < capacity; i++) {
            seq_id_[i] = &seq_id_storage_[i];
        }
        batch_          = llama_batch{};
        batch_.token    = token_.data();
        batch_.embd     = embd_.data();
        batch_.pos      = pos_.data();
        batch_.n_seq_id = n_seq_id_.data();
        batch_.seq_id   = seq_id_.data();
        batch_.logits   = logits_.data();
    }

    int32_t capacity() const { return capacity_; }
    int32_t size() const { return batch_.n_tokens; }
    void clear() { batch_.n_tokens = 0; }
    llama_batch & get() { return batch_; }

    // appends a row on sequence 0; h: n_embd floats (nullptr: zeros, for a row with no
    // predecessor)
    void add(llama_token token, llama_pos pos, const float * h, bool want_logits) {
        const int32_t i = batch_.n_tokens;
        token_[i]       = token;
        pos_[i]         = pos;
        logits_[i]      = want_logits;
        float * row     = embd_.data() + static_cast<size_t>(i) * n_embd_;
        if (h) {
            std::memcpy(row, h, sizeof(float) * n_embd_);
        } else {
            std::fill(row, row + n_embd_, 0.0f);
        }
        batch_.n_tokens++;
    }

  private:
    int32_t capacity_;
    int32_t n_embd_;
    std::vector<llama_token> token_;
    std::vector<float> embd_;
    std::vector<llama_pos> pos_;
    std::vector<int32_t> n_seq_id_;
    std::vector<llama_seq_id> seq_id_storage_;
    std::vector<llama_seq_id *> seq_id_;
    std::vector<int8_t> logits_;
    llama_batch batch_;
};

class proposer_mtp : public proposer {
  public:
    proposer_mtp(model_ref model, llama_context * target, const proposer_run_params & p, int32_t fr_vocab) :
        model_(std::move(model)), target_(target), p_min_(p.p_min), n_embd_(llama_model_n_embd_out(model_.get())),
        n_vocab_(llama_vocab_n_tokens(llama_model_get_vocab(model_.get()))),
        n_draft_vocab_(fr_vocab > 0 ? std::min(fr_vocab, n_vocab_) : n_vocab_),
        batch_(static_cast<int32_t>(llama_n_batch(target)) + 1, n_embd_) {
        llama_context_params cp = llama_context_default_params();
        cp.ctx_type             = LLAMA_CONTEXT_TYPE_MTP;
        cp.ctx_other            = target; // as common_speculative does; qwen35-style heads keep their own KV
        cp.n_ctx                = llama_n_ctx(target);
        // one decode mirrors up to a whole target batch plus the anchor row
        cp.n_batch          = llama_n_batch(target) + 1;
        cp.n_ubatch         = cp.n_batch;
        cp.n_seq_max        = 1;
        cp.n_rs_seq         = 0;
        ctx_                = open_proposer_context(model_.get(), cp, p, "the MTP context");
        llama_context * raw = ctx_.get();
        if (llama_get_ctx_other(raw) == target) {
            // a head that reads the target's own KV (Gemma 4 assistants) drafts at one shared
            // position; this proposer implements the separate-KV (NextN block) scheme only
            throw std::runtime_error("this model's MTP head shares the target's memory, which the mtp proposer does not support");
        }
        // target: a hidden row for every token of every batch (prefill rows have no logits);
        // for qwen35 this only copies out a tensor the graph computes anyway, so the target's
        // logits are the same as without it
        llama_set_embeddings_nextn(target_, true, /*masked=*/false);
        // MTP context: its own hidden rows, unmasked too. Masked, llama.cpp copies the first
        // n_outputs rows of the head's h_nextn tensor, which the qwen35 MTP graph takes before
        // selecting the output rows: in a batch whose output (the anchor) is not its first
        // row, that hands back the first row's state instead of the anchor's.
        llama_set_embeddings_nextn(ctx_.get(), true, /*masked=*/false);
        if (n_draft_vocab_ < n_vocab_) {
            project_head_part(raw);
        }
        // FR leaves the head's other logits 0, which a sampler over the whole row could pick:
        // under FR the row is read here, over its first n_draft_vocab_ entries
        if (p.backend_sampling && n_draft_vocab_ == n_vocab_) {
            greedy_ = make_greedy_chain();
            if (!llama_set_sampler(raw, 0, greedy_.get())) {
                throw std::runtime_error("llama.cpp could not attach greedy sampling to the MTP context's backend");
            }
        }
        window_.reserve(static_cast<size_t>(batch_.capacity()) * n_embd_);
        next_window_.reserve(window_.capacity());
        pending_.reserve(batch_.capacity());
        h_.resize(n_embd_);
    }

    ~proposer_mtp() override {
        if (greedy_) {
            llama_set_sampler(ctx_.get(), 0, nullptr);
        }
        // the target outlives this proposer only briefly (session teardown), but leave it as found
        if (target_) {
            llama_set_embeddings_nextn(target_, false, false);
        }
    }

    const char * name() const override { return "mtp"; }

    void begin(const std::vector<llama_token> &) override {}

    // Keeps a target decode as the pending batch: its tokens and hidden rows h_{p0} ..
    // h_{p0+n-1}, plus h_{p0-1}. The previous pending rows below p0 are committed (the
    // target decodes at p0, so it holds exactly the positions below): they are mirrored first.
    void observe_target(const llama_batch & b) override {
        if (b.n_tokens <= 0 || !b.token || b.embd) {
            return; // embeddings input (no token ids): nothing to pair with
        }
        const llama_pos p0 = b.pos[0];
        mirror_pending(p0);
        trim_from(p0);

        // the new window: h_{p0-1} (zeros when unknown, as llama.cpp does at position 0), then
        // the batch's rows
        const size_t row = static_cast<size_t>(n_embd_);
        next_window_.resize((b.n_tokens + 1) * row);
        const float * before = window_row(p0 - 1);
        if (before) {
            std::memcpy(next_window_.data(), before, row * sizeof(float));
        } else {
            std::fill(next_window_.begin(), next_window_.begin() + row, 0.0f);
        }
        for (int32_t i = 0; i < b.n_tokens; i++) {
            const float * h = llama_get_embeddings_nextn_ith(target_, i);
            if (!h) {
                // should not happen (every row is output unmasked): nothing to pair rows with
                forget_window();
                return;
            }
            std::memcpy(next_window_.data() + (i + 1) * row, h, row * sizeof(float));
        }
        window_.swap(next_window_);
        window_pos_  = p0 - 1;
        window_rows_ = b.n_tokens + 1;
        pending_pos_ = p0;
        pending_.assign(b.token, b.token + b.n_tokens);
    }

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        const llama_pos n_past = static_cast<llama_pos>(history.size());
        if (n_max <= 0 || anchor < 0 || static_cast<size_t>(n_past) + n_max > llama_n_ctx(ctx_.get())) {
            return; // the pending rows wait for the next batch
        }
        if (in_kv_.size() > static_cast<size_t>(n_past)) {
            trim_from(n_past); // the target went back (a failed round): so does the head
        }
        // the rows below the anchor not mirrored yet must all be in the pending batch, with the
        // history's tokens, and the anchor needs h_{n_past-1}
        const llama_pos from = static_cast<llama_pos>(in_kv_.size());
        const float * h_last = window_row(n_past - 1);
        bool ready           = h_last && in_step_with(history);
        for (llama_pos pos = from; ready && pos < n_past; pos++) {
            ready = pending_has(pos) && pending_[pos - pending_pos_] == history[pos];
        }
        if (!ready) {
            drop_pending(); // should not happen; the next batch starts the mirror over
            return;
        }

        // one decode: the committed pending rows (no outputs), then the anchor (first guess)
        batch_.clear();
        for (llama_pos pos = from; pos < n_past; pos++) {
            batch_.add(history[pos], pos, window_row(pos - 1), false);
        }
        batch_.add(anchor, n_past, h_last, true);
        if (llama_decode(ctx_.get(), batch_.get()) != 0) {
            trim_from(from); // cancelled or failed: the next batch starts past a gap
            drop_pending();
            return;
        }
        in_kv_.insert(in_kv_.end(), history.begin() + from, history.end());
        drop_pending(); // its rows past the history were rejected

        int32_t last = batch_.size() - 1;
        for (int i = 0; i < n_max; i++) {
            const float * h_next = llama_get_embeddings_nextn_ith(ctx_.get(), last);
            // greedy drafting (top-1): in the head's graph, or over its row of logits
            llama_token token = greedy_ ? llama_get_sampled_token_ith(ctx_.get(), last) : argmax_row(last);
            if (guide_ && token != LLAMA_TOKEN_NULL) {
                const float * row = greedy_ ? nullptr : llama_get_logits_ith(ctx_.get(), last);
                token             = grammar_guided_pick(guide_, token, row, std::min(guide_vocab_, n_draft_vocab_), guide_cur_);
            }
            if (!h_next || token == LLAMA_TOKEN_NULL) {
                break;
            }
            if (!greedy_ && below_p_min(llama_get_logits_ith(ctx_.get(), last), n_draft_vocab_, token, p_min_)) {
                break; // p-min: not sure enough, the draft ends here
            }
            out.push_back(token);
            if (i + 1 == n_max) {
                break;
            }
            // the head's own hidden row stands in for the target's at the next position
            std::memcpy(h_.data(), h_next, h_.size() * sizeof(float));
            batch_.clear();
            batch_.add(token, n_past + 1 + i, h_.data(), true);
            if (llama_decode(ctx_.get(), batch_.get()) != 0) {
                break;
            }
            last = 0;
        }
        // the anchor's row and the draft rows go: the verify batch brings the anchor back
        // with the target's own rows
        remove_rows_from(n_past);
    }

  private:
    // FR: only Power's patched llama.cpp can project the MTP head onto a part of its rows
    void project_head_part(llama_context * ctx) const {
#if POWER_LLAMA_PATCHED
        llama_set_mtp_fr_vocab(ctx, n_draft_vocab_);
#else
        (void)ctx;
        throw std::runtime_error("FR (a draft vocabulary of " + std::to_string(n_draft_vocab_) +
                                 " tokens) needs the llama.cpp Power builds from source; this engine runs the released "
                                 "one: choose the cpu, vulkan or cuda-src engine, or draft over the whole vocabulary");
#endif
    }

    bool pending_has(llama_pos pos) const {
        return pending_pos_ >= 0 && pos >= pending_pos_ && pos < pending_pos_ + static_cast<llama_pos>(pending_.size());
    }

    void drop_pending() {
        pending_.clear();
        pending_pos_ = -1;
    }

    // mirrors the pending rows below `limit` that follow the MTP context's last row, then drops
    // the pending batch
    void mirror_pending(llama_pos limit) {
        const llama_pos from = static_cast<llama_pos>(in_kv_.size());
        if (!pending_has(from) || from >= limit) {
            drop_pending();
            return;
        }
        const llama_pos end = std::min<llama_pos>(limit, pending_pos_ + static_cast<llama_pos>(pending_.size()));
        batch_.clear();
        for (llama_pos pos = from; pos < end; pos++) {
            batch_.add(pending_[pos - pending_pos_], pos, window_row(pos - 1), false);
        }
        if (llama_decode(ctx_.get(), batch_.get()) != 0) {
            trim_from(from); // cancelled or failed: the next batch starts past a gap
        } else {
            in_kv_.insert(in_kv_.end(), pending_.begin() + (from - pending_pos_), pending_.begin() + (end - pending_pos_));
        }
        drop_pending();
    }

    // the target's hidden row at `pos` from the last observed batch (or the row before it);
    // nullptr when it is not there
    const float * window_row(llama_pos pos) const {
        if (pos < 0 || window_rows_ == 0 || pos < window_pos_ || pos >= window_pos_ + window_rows_) {
            return nullptr;
        }
        return window_.data() + static_cast<size_t>(pos - window_pos_) * n_embd_;
    }

    void forget_window() {
        window_rows_ = 0;
        window_pos_  = -1;
        drop_pending();
    }

    // true when the MTP rows below history.size() were built from exactly these tokens
    // (-1: a row that is absent after a gap, which degrades drafts but misleads nothing)
    bool in_step_with(const std::vector<llama_token> & history) const {
        const size_t n = std::min(in_kv_.size(), history.size());
        for (size_t i = 0; i < n; i++) {
            if (in_kv_[i] != history[i] && in_kv_[i] != -1) {
                return false;
            }
        }
        return true;
    }

    // makes the MTP context hold rows for positions < pos only; when it holds fewer (a decode
    // failed or was cancelled), the missing positions are marked absent and the KV is cleared,
    // so that a batch may start at pos whatever the model's position rules
    void trim_from(llama_pos pos) {
        const size_t keep = static_cast<size_t>(std::max<llama_pos>(pos, 0));
        if (in_kv_.size() >= keep) {
            remove_rows_from(pos);
            in_kv_.resize(keep);
            return;
        }
        llama_memory_clear(llama_get_memory(ctx_.get()), true);
        in_kv_.assign(keep, -1);
    }

    void remove_rows_from(llama_pos pos) {
        // an attention KV cache (the MTP context never has recurrent state) cuts anywhere
        if (!llama_memory_seq_rm(llama_get_memory(ctx_.get()), 0, pos, -1)) {
            llama_memory_clear(llama_get_memory(ctx_.get()), true);
            std::fill(in_kv_.begin(), in_kv_.end(), -1);
        }
    }

    // LLAMA_TOKEN_NULL when the row has no logits
    llama_token argmax_row(int32_t row) const {
        const float * logits = llama_get_logits_ith(ctx_.get(), row);
        if (!logits) {
            return LLAMA_TOKEN_NULL;
        }
        llama_token best = 0;
        for (llama_token t = 1; t < n_draft_vocab_; t++) {
            if (logits[t] > logits[best]) {
                best = t;
            }
        }
        return best;
    }

    model_ref model_;        // keeps the weights alive as long as this context
    llama_context * target_; // not owned: the session's context, which outlives the proposer
    float p_min_;            // p-min (proposer_run_params; never with greedy_: it reads the row)
    int32_t n_embd_;
    int32_t n_vocab_;
    int32_t n_draft_vocab_; // the tokens a draft is drawn from: the head's first rows (FR) or all
    sampler_ptr greedy_;    // attached to ctx_ for backend drafting (declared first: outlives it)
    context_ptr ctx_;
    mtp_batch batch_;

    std::vector<llama_token> in_kv_;   // token of each MTP row by position (-1: absent)
    std::vector<llama_token> pending_; // tokens of the last target batch not mirrored yet
    llama_pos pending_pos_ = -1;       // position of pending_[0] (-1: nothing pending)
    std::vector<float> window_;        // target rows h_{window_pos_} .. (window_rows_ rows)
    std::vector<float> next_window_;   // reused while building the next window
    llama_pos window_pos_ = -1;
    int32_t window_rows_  = 0;
    std::vector<float> h_; // the hidden row the next draft step reads
};

} // namespace

std::unique_ptr<proposer> make_proposer_mtp(model_ref model, llama_context * target, const proposer_run_params & params, int32_t fr_vocab) {
    return std::make_unique<proposer_mtp>(std::move(model), target, params, fr_vocab);
}

} // namespace power
