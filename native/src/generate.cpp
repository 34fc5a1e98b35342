#include "generate.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "transaction.h"

namespace power {
namespace {

constexpr int32_t decode_aborted = 2; // llama_decode: the abort callback stopped it

size_t common_prefix(const std::vector<llama_token> & a, const std::vector<llama_token> & b) {
    size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) {
        i++;
    }
    return i;
}

// Drops every state row at position >= keep. Recurrent state cannot always be cut back (only
// within the last decode's snapshots, see cut_target); then the sequence is cleared and the
// prompt is evaluated from the start.
void rollback_to(session_core & core, size_t keep) {
    keep               = std::min(keep, core.committed.size());
    const int32_t back = static_cast<int32_t>(core.committed.size() - keep);
    if (!cut_target(core, static_cast<llama_pos>(keep), back)) {
        forget_target(core);
        return;
    }
    core.committed.resize(keep);
}

// The test hook of session_core::hold_after_round: the round just emitted is the one it names,
// so the request hands its rounds over (the test waits to see them) and waits for a cancel,
// which the loop then reports as "cancelled".
void hold_if_asked(session_core & core, int32_t rounds_emitted, round_sink & sink) {
    if (core.hold_after_round <= 0 || rounds_emitted < core.hold_after_round) {
        return;
    }
    core.hold_after_round = 0;
    sink.flush();
    while (!core.cancel.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

std::string decode_failure(int32_t rc) {
    if (rc == 1) {
        return "llama_decode found no room in the context (code 1)";
    }
    return "llama_decode failed (code " + std::to_string(rc) + ")";
}

// Evaluates the prompt past what the context already holds; logits on its last token only.
// Returns false when a cancel aborted it. The committed state grows chunk by chunk. `reused`
// gets the prompt positions whose state was kept (0 when recurrent state had to start over).
bool prefill(session_core & core, const std::vector<llama_token> & prompt, int32_t & reused) {
    size_t keep = common_prefix(core.committed, prompt);
    if (keep == prompt.size()) {
        keep--; // the last prompt token is evaluated again: its logits pick the first token
    }
    if (keep < core.committed.size()) {
        rollback_to(core, keep);
    }
    reused              = static_cast<int32_t>(core.committed.size());
    batch_owner & batch = *core.batch;
    while (core.committed.size() < prompt.size()) {
        size_t from = core.committed.size();
        size_t to   = std::min(prompt.size(), from + static_cast<size_t>(batch.capacity()));
        batch.clear();
        for (size_t i = from; i < to; i++) {
            batch.add(prompt[i], static_cast<llama_pos>(i), i + 1 == prompt.size());
        }
        core.rs_room = 0; // until this decode succeeds, no snapshot is known to be good
        int32_t rc   = llama_decode(core.ctx.get(), batch.get());
        if (rc != 0) {
            if (core.spec.recurrent) {
                // an aborted graph may have written some layers' recurrent state: only a
                // fresh start is exact
                forget_target(core);
            } else {
                rollback_to(core, from); // a partly processed chunk leaves rows behind
            }
            if (rc == decode_aborted) {
                return false;
            }
            throw std::runtime_error("prompt evaluation failed: " + decode_failure(rc));
        }
        note_target_decode(core, batch.get().n_tokens);
        observe_target(core, batch.get());
        core.committed.insert(core.committed.end(), prompt.begin() + from, prompt.begin() + to);
    }
    return true;
}

} // namespace

void round_batch::clear() {
    numbers.clear();
    ids.clear();
    origins.clear();
    bytes.clear();
    piece_ends.clear();
    logprobs.clear();
    top_ids.clear();
    top_logprobs.clear();
    top_bytes.clear();
    top_piece_ends.clear();
}

void round_batch::drop_partial_round() {
    size_t named = 0;
    for (size_t r = 0; r < rounds(); r++) {
        named += static_cast<size_t>(numbers[r * n_fields + n_tokens]);
    }
    if (ids.size() > named) {
        ids.resize(named);
        origins.resize(named);
        piece_ends.resize(named);
        bytes.resize(named > 0 ? piece_ends.back() : 0);
    }
    if (logprobs.size() > named) {
        const size_t n_top = top_ids.size() / logprobs.size();
        logprobs.resize(named);
        top_ids.resize(named * n_top);
        top_logprobs.resize(named * n_top);
        top_piece_ends.resize(named * n_top);
        top_bytes.resize(top_piece_ends.empty() ? 0 : top_piece_ends.back());
    }
}

void round_batch::add_probs(const llama_vocab * vocab, const row_probs & probs) {
    logprobs.push_back(probs.chosen);
    char buf[256];
    for (const auto & [id, logprob] : probs.top) {
        const int32_t n = llama_token_to_piece(vocab, id, buf, sizeof buf, 0, false);
        top_ids.push_back(id);
        top_logprobs.push_back(logprob);
        top_bytes.insert(top_bytes.end(), buf, buf + (n > 0 ? n : 0));
        top_piece_ends.push_back(static_cast<uint32_t>(top_bytes.size()));
    }
}

void round_batch::add_token(const llama_vocab * vocab, llama_token id, origin o) {
    char buf[256];
    const int32_t n = llama_token_to_piece(vocab, id, buf, sizeof buf, 0, false);
    ids.push_back(id);
    origins.push_back(o);
    bytes.insert(bytes.end(), buf, buf + (n > 0 ? n : 0));
    piece_ends.push_back(static_cast<uint32_t>(bytes.size()));
}

void round_batch::add_round(int32_t n_proposed, int32_t n_accepted, bool replayed, int32_t clamp_to, int64_t start, int64_t end,
                            int64_t propose, int64_t verify, int64_t commit, int32_t n_tok, int32_t member, int32_t draft_source,
                            double draft_expected) {
    const double row[n_fields] = {
        double(n_proposed), double(n_accepted),   replayed ? 1.0 : 0.0, double(clamp_to), double(start),
        double(end),        double(propose),      double(verify),       double(commit),   double(n_tok),
        double(member),     double(draft_source), draft_expected,
    };
    numbers.insert(numbers.end(), row, row + n_fields);
}

generate_result run_generation(session_core & core, const generate_request & req, round_sink & sink) {
    const llama_vocab * vocab = llama_model_get_vocab(core.model.get());
    const int64_t t0          = req.t0_us > 0 ? req.t0_us : llama_time_us();
    const uint32_t n_ctx      = llama_n_ctx(core.ctx.get());

    generate_result result;
    result.prompt_tokens = static_cast<int32_t>(req.prompt.size());
    if (req.prompt.empty()) {
        throw std::runtime_error("the prompt is empty");
    }
    if (req.prompt.size() + 1 > n_ctx) {
        throw std::runtime_error("the prompt is " + std::to_string(req.prompt.size()) + " tokens but the context holds " +
                                 std::to_string(n_ctx) + " (with room for at least one generated token)");
    }
    std::string invalid = validate(req.sampling);
    if (!invalid.empty()) {
        throw std::invalid_argument(invalid);
    }
    target_sampler sampler = make_sampler(vocab, req.sampling);
    if (req.sampling.backend) {
        const std::string problem = backend_chain_problem(req.sampling, core.spec.k + 1);
        if (!problem.empty()) {
            throw std::invalid_argument("backend sampling cannot run this chain: " + problem + " (use CPU sampling)");
        }
    }
    // before the prompt: the first token is drawn in the prefill's last pass
    backend_sampler_scope attached(core.ctx.get(), sampler.chain_ptr(), req.sampling.backend);

    core.prop->begin(proposer_history(core));
    bool completed    = prefill(core, req.prompt, result.reused_tokens);
    result.prefill_us = llama_time_us() - t0;
    if (!completed) {
        result.stop_reason = "cancelled";
        result.total_us    = llama_time_us() - t0;
        return result;
    }

    // the first token comes from the prompt's last row: an autoregressive step, no proposals
    round_state st;
    core.n_probs = req.sampling.n_probs;
    core.drawn_probs.clear();
    llama_token first = draw_target_row(core, sampler, req.sampling.backend, -1, static_cast<llama_pos>(req.prompt.size()));
    if (llama_vocab_is_eog(vocab, first)) {
        result.stop_reason = "eos";
        result.total_us    = llama_time_us() - t0;
        return result;
    }
    round_batch & first_batch = sink.open();
    first_batch.add_token(vocab, first, round_batch::target);
    if (!core.drawn_probs.empty()) {
        first_batch.add_probs(vocab, core.drawn_probs.front());
    }
    int64_t round_start = llama_time_us() - t0;
    first_batch.add_round(0, 0, false, -1, 0, round_start, 0, 0, 0, 1);
    sink.close(true);
    result.generated = 1;
    st.anchor        = first;

    transaction tx(core, sampler, req.sampling.backend, st);
    while (true) {
        const int32_t budget = req.max_tokens - result.generated;
        if (budget <= 0) {
            result.stop_reason = "max-tokens";
            break;
        }
        if (core.committed.size() >= n_ctx) {
            result.stop_reason = "context-full";
            break;
        }
        if (core.cancel.load()) {
            result.stop_reason = "cancelled";
            break;
        }
        const int32_t n_max = tx.scheduled_proposals(budget);
        tx.retain_checkpoint();
        tx.request_proposals(n_max);
        if (!tx.verify()) {
            result.stop_reason = "cancelled";
            break;
        }
        tx.sample_rows(budget);
        tx.commit();
        round_start = tx.emit(round_start, t0, sink.open());
        result.generated += static_cast<int32_t>(st.emitted.size());
        sink.close(false);
        if (st.saw_eog) {
            result.stop_reason = "eos";
            break;
        }
        hold_if_asked(core, st.round_no, sink);
    }
    core.hold_after_round   = 0; // the hook holds one request, whether or not it got that far
    result.replays          = st.replays;
    result.grammar_cut      = st.grammar_cut;
    result.reasoning_forced = sampler.budget ? sampler.forced_ends : -1;
    result.clamp            = st.clamp;
    result.total_us         = llama_time_us() - t0;
    return result;
}

} // namespace power
