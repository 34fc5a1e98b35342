#pragma once
// The speculative transaction (docs/speculative-decoding.md "The transaction"), one function per step:
//   1 retain_checkpoint  2 request_proposals  3 verify  4 sample_rows  5 commit  6 emit
//   7 restore_last_commit (on cancellation or failure)
// A round starts from the anchor (the last emitted token, not yet evaluated by the target) and
// ends with the anchor, the accepted proposals and the new anchor's predecessors committed.

#include <cstdint>
#include <vector>

#include "generate.h"
#include "session_core.h"

namespace power {

// per-request state the rounds share; buffers are reused, so a round allocates nothing once
// they have grown
struct round_state {
    llama_token anchor  = -1; // last emitted token, not yet in the target's state
    int32_t clamp       = -1; // proposals per round after a guarded replay (-1: none)
    int32_t adaptive    = -1; // adaptive K: proposals the next round may ask for (-1: K; transaction::commit)
    int32_t replays     = 0;
    int32_t round_no    = 0; // verify rounds so far in this request
    int32_t grammar_cut = 0; // proposals the grammar refused before verification (with the ones after them)

    // this round
    std::vector<llama_token> proposals;
    std::vector<llama_token> emitted;
    std::vector<const char *> origins;
    int32_t accepted    = 0;
    bool saw_eog        = false;
    bool has_checkpoint = false;
    bool replayed       = false;
    llama_pos base      = 0; // position of the anchor
};

// Samples the target's output row `i` of the last decode, the token for sequence position `pos`,
// and advances the sampler for it: from the row of logits on the CPU, or the token the backend
// drew in the graph. `power audit`'s capture sees each row first (row_capture.h).
llama_token draw_target_row(session_core & core, target_sampler & sampler, bool backend, int32_t i, llama_pos pos);

class transaction {
  public:
    // backend: the sampler is attached to the target's context (sampling_params::backend)
    transaction(session_core & core, target_sampler & sampler, bool backend, round_state & st);

    // how many proposals this round may ask for: K, or the clamp, or adaptive K's cap, bounded
    // by the tokens still to emit and the room left in the context
    int32_t scheduled_proposals(int32_t budget) const;

    void retain_checkpoint();                                      // 1
    void request_proposals(int32_t n_max);                         // 2
    bool verify();                                                 // 3 (false: cancelled; throws on failure; restores both)
    void sample_rows(int32_t budget);                              // 4
    void commit();                                                 // 5
    int64_t emit(int64_t start_us, int64_t t0, round_batch & out); // 6 (returns the round's end, µs since t0)
    void restore_last_commit();                                    // 7

    int64_t propose_us = 0, verify_us = 0, commit_us = 0;

  private:
    bool restore_checkpoint();
    void replay_kept(int32_t kept);
    void adapt_k(); // step 5's last part: the next round's cap under adaptive K

    session_core & core_;
    target_sampler & sampler_;
    bool backend_;
    round_state & st_;
    const llama_vocab * vocab_;
};

} // namespace power
