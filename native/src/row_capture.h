#pragma once
// Row capture for `power audit`: keeps the logits row a request sampled the token at one sequence
// position from, so a speculative run's verify row can be compared with the one-row decode of the
// autoregressive control (docs/exactness.md, batch invariance). Optionally draws from a second
// row with a copy of the sampler as it stood right then (same RNG state, same penalty history):
// that tells whether the difference between the rows moved the draw.
// The transaction calls inspect_sampled_row() just before it samples each row; when no capture is
// armed that is one comparison.

#include <cstdint>
#include <vector>

#include "llama.h"
#include "sampling.h"

namespace power {

struct row_capture {
    llama_pos position = -1;  // the sequence position whose row to keep (-1: off)
    std::vector<float> other; // a row to draw from with the sampler's state at `position` (empty: none)

    // filled when the row was sampled
    bool captured = false;
    std::vector<float> row;          // the logits row the token at `position` was sampled from
    llama_token row_token   = -1;    // what a copy of the sampler, in that state, draws from `row`
    llama_token other_token = -1;    // the same from `other`
    bool backend            = false; // the token was drawn on the backend: `row` stays empty
    // the copy's candidates after its chain, in the order it accumulated them, with their
    // probabilities (seeded chains; greedy: empty): where the draw fell between two tokens
    std::vector<llama_token_data> drawn_from;

    // test hook: at `perturb_position` the row's runner-up is raised above its top token before
    // sampling, as a kernel that rounds differently might do. hidden: the captured row is the
    // unperturbed one, as if the transaction sampled from something else (an unexplained divergence)
    llama_pos perturb_position = -1;
    bool perturb_hidden        = false;

    void arm(llama_pos pos, std::vector<float> other_row) {
        position = pos;
        other    = std::move(other_row);
        captured = false;
        row.clear();
        row_token   = -1;
        other_token = -1;
        backend     = false;
        drawn_from.clear();
    }
};

// Called with the row about to be sampled for the token at `pos` (the sampler not yet advanced
// for it). May change the row only under the test hook.
void inspect_sampled_row(row_capture & cap, const target_sampler & sampler, llama_pos pos, float * logits, int32_t n_vocab);

// The backend drew `token` for `pos` in the graph: only the token is known.
void note_backend_draw(row_capture & cap, llama_pos pos, llama_token token);

} // namespace power
