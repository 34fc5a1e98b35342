#pragma once
// The state a session's background work shares with its JS object. The JS thread owns the
// bookkeeping fields; the generation thread owns the context while `busy` is set.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <napi.h>

#include "handles.h"
#include "proposer.h"

namespace power {

struct session_params {
    uint32_t n_ctx     = 4096; // context size in tokens
    uint32_t n_batch   = 512;  // prompt tokens per decode call
    int32_t  n_threads = 0;    // 0: llama.cpp's default
    llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO; // when to use Flash Attention
    std::string strategy = "none"; // proposer: none | ngram | draft-model | mtp
    int32_t k = 0;                 // spec_draft_max
    int32_t s = 0;                 // spec_mtp_recurrent_snapshots (recurrent targets only)
};

// how the session speculates: fixed at creation (the context's n_rs_seq depends on S)
struct spec_params {
    int32_t k = 0;          // spec_draft_max: proposals per round (0: autoregressive)
    int32_t s = 0;          // spec_mtp_recurrent_snapshots: rollback points (recurrent targets)
    bool    recurrent = false; // the target keeps recurrent state: S applies
};

struct session_core {
    model_ref      model;
    context_ptr    ctx;
    session_params params;
    std::unique_ptr<batch_owner> batch;   // reused by every decode of this session
    spec_params spec;
    std::unique_ptr<proposer> prop;       // the strategy's proposer ("none" proposes nothing)
    std::vector<uint8_t> checkpoint;      // recurrent state at the start of a round, when needed
    std::string flash_attn_used = "unknown"; // what llama.cpp settled on: on | off | unknown

    // test hook: fail the verify decode of this round (1-based) of the next request; 0: off
    int32_t fail_at_round = 0;

    // tokens whose state the context holds: the last committed transaction
    std::vector<llama_token> committed;

    std::atomic<bool> cancel{false};      // set by cancel()/dispose(), read by the worker and abort callback
    // set while a commit replays its kept rows: that decode completes the commit, so a cancel
    // waits for the next round boundary instead of aborting it halfway (generation thread only)
    std::atomic<bool> uninterruptible{false};

    // JS thread only
    bool busy      = false;
    bool disposing = false;
    std::vector<Napi::Promise::Deferred> dispose_waiters;
};

using session_core_ref = std::shared_ptr<session_core>;

} // namespace power
