#pragma once
// The state a session's background work shares with its JS object. The JS thread owns the
// bookkeeping fields; the generation thread owns the context while `busy` is set.

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cpu_threads.h"
#include "handles.h"
#include "proposer.h"
#include "row_capture.h"
#include "sampling.h"

namespace power {

struct shared_projector; // a model's projector, shared by its sessions (media.cpp)

// An image's positions in the committed state: [start, start + n_pos), the image file they were
// evaluated from (a later prompt keeps them only for the same bytes at the same start). A cut
// inside the span leaves its head with no file: rows that no prompt reuses.
struct media_span {
    size_t start = 0;
    size_t n_pos = 0;
    std::shared_ptr<const std::vector<uint8_t>> file;
};

struct session_params {
    uint32_t n_ctx                   = 4096;                       // context size in tokens
    uint32_t n_batch                 = 512;                        // prompt tokens per decode call
    int32_t n_threads                = 0;                          // 0: default_thread_count()
    uint32_t poll                    = default_threadpool_poll;    // the session pool's polling level (0..100)
    llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO; // when to use Flash Attention
    std::string strategy             = "none"; // proposer: none | ngram | draft-model | mtp | eagle3 | ... or a list "ngram,mtp"
    int32_t k                        = 0;      // spec_draft_max
    int32_t s                        = 0;      // spec_mtp_recurrent_snapshots (recurrent targets only)
    bool proposer_backend_sampling   = false;  // the proposer drafts greedily in its own graph
    int32_t fr_vocab                 = 0;      // FR: the MTP head drafts among the first N tokens (0: all)
    float p_min                      = 0.0f;   // greedy drafters stop under this top-1 probability (0: off)
    bool adaptive_k                  = false;  // the schedule shortens K after rejections (transaction.cpp)
    int32_t suffix_store_tokens      = 65536;  // `suffix`: the model's store of earlier replies, in tokens (0: off)
    std::string suffix_store_path;             // its file, read when the store is made ("": in memory only)
    std::string projector;                     // the model's mmproj-*.gguf: prompts may hold images ("": text only)
};

// how the session speculates: fixed at creation (the context's n_rs_seq depends on S)
struct spec_params {
    int32_t k       = 0;     // spec_draft_max: proposals per round (0: autoregressive)
    int32_t s       = 0;     // spec_mtp_recurrent_snapshots: rollback points (recurrent targets)
    bool recurrent  = false; // the target keeps recurrent state: S applies
    bool adaptive_k = false; // proposals per round follow the last round's acceptance, up to k
};

struct session_core {
    model_ref model;
    threadpool_ptr pool; // shared by ctx and the proposer's context; outlives both
    context_ptr ctx;
    session_params params;
    std::unique_ptr<batch_owner> batch; // reused by every decode of this session
    spec_params spec;
    std::unique_ptr<proposer> prop;           // the strategy's proposer ("none" proposes nothing)
    std::vector<uint8_t> checkpoint;          // recurrent state at the start of a round, when needed
    std::vector<llama_token_data> candidates; // the sampler's candidate buffer, reused every row
    // log-probabilities asked for by the running request (-1: none), and those of the rows drawn
    // in this round, in order (the emitted tokens' are the first ones)
    int32_t n_probs = -1;
    std::vector<row_probs> drawn_probs;
    std::string flash_attn_used = "unknown"; // what llama.cpp settled on: on | off | unknown

    // test hook: fail the verify decode of this round (1-based) of the next request; 0: off
    int32_t fail_at_round = 0;
    // test hook: the next request, once it has emitted this many rounds (1-based), waits for a
    // cancel instead of going on, so a test acting on a reply in flight never races its end; 0: off
    int32_t hold_after_round = 0;

    // `power audit`: the row one position's token is sampled from (row_capture.h)
    row_capture capture;

    // tokens whose state the context holds: the last committed transaction. A position that
    // holds an image's embedding holds media_position (media.cpp): no prompt token equals it, so
    // a token prompt reuses the state only up to the first image; a prompt with images also
    // keeps the images of `media` it repeats (evaluate_media_prompt)
    std::vector<llama_token> committed;
    // the images in committed, in order; kept in step with every cut (cut_target, forget_target).
    // Proposers see the text positions only while there is one (proposer_history)
    std::vector<media_span> media;
    std::vector<llama_token> text_view; // proposer_history's buffer
    std::vector<llama_pos> text_pos;    // observe_target's buffer

    // the projector on this session's model, shared with the model's other sessions of the same
    // settings (null: text only). Shared ownership also lets code without the multimodal
    // library (native/checker) hold a session_core.
    std::shared_ptr<shared_projector> projector;

    // recurrent targets: how many positions the snapshots of the last target decode can still
    // take back (note_target_decode); unused for attention-only targets
    int32_t rs_room = 0;

    // why the last cut of a sliding-window target failed (cut_target; "" if none): a request
    // that fails on it says so (session.cpp); cleared when a request starts (generation thread)
    std::string cut_problem;

    std::atomic<bool> cancel{false}; // set by cancel()/dispose(), read by the worker and abort callback
    // set while a commit replays its kept rows: that decode completes the commit, so a cancel
    // waits for the next round boundary instead of aborting it halfway (generation thread only)
    std::atomic<bool> uninterruptible{false};

    // JS thread only
    bool busy      = false;
    bool disposing = false;
    std::vector<std::function<void()>> on_disposed; // resolve the dispose() promises waiting for the job
};

using session_core_ref = std::shared_ptr<session_core>;

// Recurrent rollback (n_rs_seq = S): a decode of n tokens leaves the states after each of its
// last min(n, S + 1) tokens, so it can take back at most min(n - 1, S) positions, once, until
// the next decode. llama_memory_seq_rm checks only the S bound: asked to go back to or past
// the decode's first token, it returns true and hands back a stale state (that snapshot slot
// holds an older decode's state). So the session keeps the exact bound itself.
inline void note_target_decode(session_core & core, int32_t n_tokens) {
    core.rs_room = core.spec.recurrent ? std::max(0, std::min(core.spec.s, n_tokens - 1)) : 0;
}

// what committed holds at a position that holds an image's embedding (never a token id)
constexpr llama_token media_position = -1;

// Empties the target's sequence: the next request evaluates its prompt from the start.
inline void forget_target(session_core & core) {
    llama_memory_clear(llama_get_memory(core.ctx.get()), true);
    core.committed.clear();
    core.media.clear();
    core.rs_room = 0;
}

// The sequence the proposers continue: the committed tokens without the positions that hold an
// image. Proposers live in this text view: its tokens, and its numbering (observe_target below
// hands them the target's batches renumbered so), because no proposer can take an image's
// positions: the n-gram families match text, a draft model decodes tokens, and the heads that
// read the target's hidden rows (mtp, eagle3, dflash, dspark) pair each row with the next
// token's id, which an image position does not have. A gap over the image in the proposer's own
// memory is no way out either: llama.cpp refuses a token batch that does not follow the
// memory's last position. So in a proposer's memory the text after an image follows the text
// before it, and its first row pairs with the last hidden row before the image. Only the
// acceptance can change: the target, which holds the image, verifies every token.
inline const std::vector<llama_token> & proposer_history(session_core & core) {
    if (core.media.empty()) {
        return core.committed;
    }
    core.text_view.clear();
    for (llama_token t : core.committed) {
        if (t != media_position) {
            core.text_view.push_back(t);
        }
    }
    return core.text_view;
}

// The target evaluated `batch` (text tokens only: an image's batch goes to no proposer): the
// proposer sees it at the positions proposer_history gives its tokens, the target's position
// less the image positions below it.
inline void observe_target(session_core & core, const llama_batch & batch) {
    if (core.media.empty() || batch.n_tokens <= 0) {
        core.prop->observe_target(batch);
        return;
    }
    core.text_pos.resize(static_cast<size_t>(batch.n_tokens));
    for (int32_t i = 0; i < batch.n_tokens; i++) {
        llama_pos below = 0;
        for (const media_span & m : core.media) {
            if (static_cast<size_t>(batch.pos[i]) >= m.start + m.n_pos) {
                below += static_cast<llama_pos>(m.n_pos);
            }
        }
        core.text_pos[i] = batch.pos[i] - below;
    }
    llama_batch renumbered = batch;
    renumbered.pos         = core.text_pos.data();
    core.prop->observe_target(renumbered);
}

// After a cut to `pos` on a sliding-window target: what the next row (at pos) cannot attend to,
// or "" when the memory holds it. The next row reads every position before it on the
// full-attention blocks and (pos - n_swa, pos) on the sliding-window ones; on an iSWA memory
// llama_memory_seq_pos_min/_max are the sliding-window cache's. The session's cache is
// full-size (swa_full, session.cpp), so each position keeps its own cell and llama.cpp reuses
// none while the context has room: the check holds on every cut, and it is what would notice
// a sliding-window cache that dropped positions a rollback needs (a ring cache), or one that
// kept rejected rows past the cut.
inline std::string swa_window_problem(const session_core & core, llama_pos pos) {
    const int32_t n_swa = llama_model_n_swa(core.model.get());
    if (n_swa <= 0 || core.spec.recurrent) {
        return "";
    }
    llama_memory_t mem   = llama_get_memory(core.ctx.get());
    const llama_pos pmin = llama_memory_seq_pos_min(mem, 0);
    const llama_pos pmax = llama_memory_seq_pos_max(mem, 0);
    const llama_pos need = std::max<llama_pos>(0, pos - n_swa + 1);
    if (pmax != pos - 1) {
        return "the sliding-window cache holds positions up to " + std::to_string(pmax) + " after a cut to " + std::to_string(pos);
    }
    if (pos > 0 && pmin > need) {
        return "the sliding-window cache (window " + std::to_string(n_swa) + ") no longer holds positions " + std::to_string(need) + ".." +
               std::to_string(pmin - 1) + " that position " + std::to_string(pos) + " attends to: it cannot roll back that far";
    }
    return "";
}

// Drops the target's rows at positions >= pos, which takes its recurrent state `back`
// positions back (0: a restored checkpoint already put it at pos). Returns false, changing
// nothing, when the recurrent state cannot go back that far exactly; also false, with the
// sequence emptied and the reason in cut_problem, when a sliding-window cache cannot
// (swa_window_problem): nothing is computed on a cache that lacks rows.
inline bool cut_target(session_core & core, llama_pos pos, int32_t back) {
    if (core.spec.recurrent && back > core.rs_room) {
        return false;
    }
    if (!llama_memory_seq_rm(llama_get_memory(core.ctx.get()), 0, pos, -1)) {
        return false;
    }
    std::string problem = swa_window_problem(core, pos);
    if (!problem.empty()) {
        core.cut_problem = std::move(problem);
        forget_target(core);
        return false;
    }
    if (back > 0) {
        core.rs_room = 0; // single use
    }
    const size_t at = static_cast<size_t>(pos);
    while (!core.media.empty() && core.media.back().start >= at) {
        core.media.pop_back();
    }
    if (!core.media.empty() && core.media.back().start + core.media.back().n_pos > at) {
        core.media.back().n_pos = at - core.media.back().start;
        core.media.back().file.reset();
    }
    return true;
}

} // namespace power
