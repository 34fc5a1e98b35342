#include "transaction.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace power {
namespace {

// the sampling step names origins as text (sampling.h); the stream carries a code
round_batch::origin origin_code(const char * origin) {
    if (std::strcmp(origin, "accepted") == 0) return round_batch::accepted_proposal;
    if (std::strcmp(origin, "correction") == 0) return round_batch::correction;
    if (std::strcmp(origin, "bonus") == 0) return round_batch::bonus;
    return round_batch::target;
}

} // namespace

llama_token draw_target_row(session_core & core, target_sampler & sampler, bool backend, int32_t i, llama_pos pos) {
    llama_context * ctx = core.ctx.get();
    if (backend) {
        const llama_token token = llama_get_sampled_token_ith(ctx, i);
        if (token == LLAMA_TOKEN_NULL) {
            throw std::runtime_error("the backend sampler drew no token for output row " + std::to_string(i));
        }
        note_backend_draw(core.capture, pos, token);
        sampler.accept(token); // the RNG and penalty history advance for it (no grammar: CPU only)
        return token;
    }
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(core.model.get()));
    float * logits        = llama_get_logits_ith(ctx, i);
    inspect_sampled_row(core.capture, sampler, pos, logits, n_vocab);
    const llama_token token = sample_row(sampler, logits, n_vocab, core.candidates);
    if (core.n_probs >= 0) {
        core.drawn_probs.emplace_back();
        row_logprobs(logits, n_vocab, token, core.n_probs, core.drawn_probs.back());
    }
    return token;
}

transaction::transaction(session_core & core, target_sampler & sampler, bool backend, round_state & st) :
    core_(core), sampler_(sampler), backend_(backend), st_(st), vocab_(llama_model_get_vocab(core.model.get())) {}

int32_t transaction::scheduled_proposals(int32_t budget) const {
    int32_t k = core_.spec.k;
    if (st_.clamp >= 0) {
        k = std::min(k, st_.clamp);
    }
    if (st_.adaptive >= 0) {
        k = std::min(k, st_.adaptive);
    }
    // a round emits at most k + 1 tokens; the verify rows must fit in the context
    const int32_t room = static_cast<int32_t>(llama_n_ctx(core_.ctx.get())) - 1 - static_cast<int32_t>(core_.committed.size());
    return std::max(0, std::min({k, budget - 1, room}));
}

// Step 1. The target's attention rows and the proposer's state roll back by position for free;
// recurrent state rolls back only through the S snapshots of the last decode, which reach back
// at most to the state after its first row (cut_target). Commit cuts stay inside the verify
// decode (the anchor is always kept), but a failed or cancelled verify must undo all of it, and
// a guarded replay more than S rows: so a recurrent target keeps a copy of its state every
// round, however many proposals it schedules.
void transaction::retain_checkpoint() {
    st_.base           = static_cast<llama_pos>(core_.committed.size());
    st_.has_checkpoint = false;
    if (!core_.spec.recurrent) {
        return;
    }
    const llama_state_seq_flags flags = LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY;
    const size_t size                 = llama_state_seq_get_size_ext(core_.ctx.get(), 0, flags);
    core_.checkpoint.resize(size);
    if (llama_state_seq_get_data_ext(core_.ctx.get(), core_.checkpoint.data(), size, 0, flags) != size) {
        throw std::runtime_error("could not checkpoint the recurrent state");
    }
    st_.has_checkpoint = true;
}

// Step 2.
void transaction::request_proposals(int32_t n_max) {
    const int64_t t = llama_time_us();
    if (n_max > 0) {
        // the proposers that can draft under the grammar get a copy of it as it stands now
        sampler_ptr walk(sampler_.grammar ? llama_sampler_clone(sampler_.grammar.get()) : nullptr);
        core_.prop->guide(walk.get(), llama_vocab_n_tokens(vocab_));
        const std::vector<llama_token> & history = proposer_history(core_);
        core_.prop->place(static_cast<int32_t>(core_.committed.size() - history.size()));
        core_.prop->propose(history, st_.anchor, n_max, st_.proposals);
        core_.prop->guide(nullptr, 0);
        if (static_cast<int32_t>(st_.proposals.size()) > n_max) {
            st_.proposals.resize(n_max); // proposals are advisory; the schedule is not
        }
        // a proposal the grammar refuses (from a proposer that drafts freely) can never be
        // emitted, so the verify pass stops short of it (the rows after it would be discarded)
        const size_t admitted = grammar_admitted_prefix(sampler_, st_.proposals, vocab_);
        st_.grammar_cut += static_cast<int32_t>(st_.proposals.size() - admitted);
        st_.proposals.resize(admitted);
    } else {
        st_.proposals.clear();
    }
    propose_us = llama_time_us() - t;
}

// Step 3: anchor + proposals in one target pass, logits on every row. Returns false when a
// cancel aborted the pass (the last commit is restored).
bool transaction::verify() {
    const int64_t t     = llama_time_us();
    batch_owner & batch = *core_.batch;
    batch.clear();
    batch.add(st_.anchor, st_.base, true);
    for (size_t i = 0; i < st_.proposals.size(); i++) {
        batch.add(st_.proposals[i], st_.base + 1 + static_cast<llama_pos>(i), true);
    }
    core_.rs_room = 0; // until this decode succeeds, no snapshot is known to be good
    int32_t rc    = llama_decode(core_.ctx.get(), batch.get());
    st_.round_no++;
    if (rc == 0 && core_.fail_at_round == st_.round_no) {
        core_.fail_at_round = 0;
        rc                  = -99; // injected by a test: the rows were evaluated, as a fatal decode error leaves them
    }
    if (rc != 0) {
        restore_last_commit();
        if (rc == 2) {
            return false; // aborted by cancel()
        }
        throw std::runtime_error("verify decode failed (code " + std::to_string(rc) + "); restored the last commit");
    }
    note_target_decode(core_, batch.get().n_tokens);
    observe_target(core_, batch.get());
    verify_us = llama_time_us() - t;
    return true;
}

// Step 4: sequential target sampling through the first mismatch. The sampler (its RNG and
// penalty history included) advances exactly once per emitted token.
void transaction::sample_rows(int32_t budget) {
    const int64_t t = llama_time_us();
    core_.drawn_probs.clear();
    const row_decision d = sample_through_first_mismatch(
        vocab_, [this](int32_t i) { return draw_target_row(core_, sampler_, backend_, i, st_.base + 1 + i); }, st_.proposals, budget,
        st_.emitted, st_.origins);
    st_.accepted = d.accepted;
    st_.saw_eog  = d.eog;
    commit_us    = llama_time_us() - t;
}

// Puts the recurrent state back to the start of the round (the attention rows past it are still
// there); false when there is no checkpoint or llama.cpp refuses it.
bool transaction::restore_checkpoint() {
    if (!st_.has_checkpoint) {
        return false;
    }
    const bool ok = llama_state_seq_set_data_ext(core_.ctx.get(), core_.checkpoint.data(), core_.checkpoint.size(), 0,
                                                 LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY) != 0;
    core_.rs_room = 0; // the snapshots no longer follow the state
    return ok;
}

// The rejected suffix was deeper than the resident snapshots: restore the round's checkpoint
// and evaluate the kept rows (anchor + accepted prefix) once more.
void transaction::replay_kept(int32_t kept) {
    if (!restore_checkpoint() || !cut_target(core_, st_.base, 0)) {
        throw std::runtime_error("could not restore the round's checkpoint for a replay");
    }
    batch_owner & batch = *core_.batch;
    batch.clear();
    batch.add(st_.anchor, st_.base, false);
    for (int32_t i = 0; i + 1 < kept; i++) {
        batch.add(st_.emitted[i], st_.base + 1 + i, false);
    }
    // the tokens are already sampled: a cancel must not abort the decode that commits them
    // (it did, as "replay decode failed (code 2)"); it is honoured at the next round boundary
    struct uninterruptible_scope {
        std::atomic<bool> & flag;
        explicit uninterruptible_scope(std::atomic<bool> & f) : flag(f) { flag.store(true); }
        ~uninterruptible_scope() { flag.store(false); }
    } guard(core_.uninterruptible);
    const int32_t rc = llama_decode(core_.ctx.get(), batch.get());
    if (rc != 0) {
        restore_last_commit();
        throw std::runtime_error("replay decode failed (code " + std::to_string(rc) + "); restored the last commit");
    }
    note_target_decode(core_, batch.get().n_tokens);
    observe_target(core_, batch.get());
    st_.replayed = true;
    st_.replays++;
    st_.clamp = core_.spec.s;
}

// Step 5: keep the anchor and every emitted token but the last (the new anchor); at an
// end-of-generation token every emitted token is kept. Every other verify row is discarded.
void transaction::commit() {
    const int64_t t    = llama_time_us();
    st_.replayed       = false;
    const int32_t m    = static_cast<int32_t>(st_.emitted.size());
    const int32_t kept = st_.saw_eog ? m + 1 : m;
    const int32_t rows = 1 + static_cast<int32_t>(st_.proposals.size());
    if (kept < rows && !cut_target(core_, st_.base + kept, rows - kept)) {
        replay_kept(kept);
    }
    core_.committed.push_back(st_.anchor);
    core_.committed.insert(core_.committed.end(), st_.emitted.begin(), st_.emitted.begin() + (kept - 1));
    core_.prop->accept(st_.accepted);
    adapt_k();
    st_.anchor = st_.saw_eog || m == 0 ? -1 : st_.emitted.back();
    commit_us += llama_time_us() - t;
}

// Adaptive K (spec.adaptive_k): after a round that drafted, the next may ask for accepted + 1
// proposals when the target rejected one (the draft went wrong about there), and twice as many
// as this one's cap, up to K, when it kept them all. Rounds that drafted nothing change nothing.
// Only the number of proposals changes: the target still decides every token.
void transaction::adapt_k() {
    const int32_t proposed = static_cast<int32_t>(st_.proposals.size());
    if (!core_.spec.adaptive_k || proposed == 0) {
        return;
    }
    const int32_t k   = core_.spec.k;
    const int32_t cap = st_.adaptive >= 0 ? st_.adaptive : k;
    st_.adaptive      = st_.accepted < proposed ? st_.accepted + 1 : std::min(k, std::max(1, cap) * 2);
}

// Step 6: the round's tokens and record go to the stream (no allocation once its buffers grew).
int64_t transaction::emit(int64_t start_us, int64_t t0, round_batch & out) {
    for (size_t i = 0; i < st_.emitted.size(); i++) {
        out.add_token(vocab_, st_.emitted[i], origin_code(st_.origins[i]));
        if (i < core_.drawn_probs.size()) {
            out.add_probs(vocab_, core_.drawn_probs[i]);
        }
    }
    const int64_t end_us                    = llama_time_us() - t0;
    const int32_t n_drafted                 = static_cast<int32_t>(st_.proposals.size());
    const proposer::draft_evidence evidence = n_drafted > 0 ? core_.prop->last_evidence(n_drafted) : proposer::draft_evidence{};
    out.add_round(n_drafted, st_.accepted, st_.replayed, st_.clamp, start_us, end_us, propose_us, verify_us, commit_us,
                  static_cast<int32_t>(st_.emitted.size()), n_drafted > 0 ? core_.prop->last_member() : -1, evidence.source,
                  evidence.expected);
    return end_us;
}

// Step 7: back to the state after the last committed round: attention rows past it are dropped,
// recurrent state comes back from the round's checkpoint (the snapshots never reach back past
// the failed decode's first row), and the proposer forgets.
void transaction::restore_last_commit() {
    // a recurrent target without its checkpoint has nothing that restores it exactly
    const bool ok = core_.spec.recurrent ? restore_checkpoint() : true;
    if (!ok || !cut_target(core_, st_.base, 0)) {
        // nothing left to roll back with: start the sequence over on the next request
        forget_target(core_);
    }
    core_.prop->restore();
}

} // namespace power
