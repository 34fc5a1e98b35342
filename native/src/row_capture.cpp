#include "row_capture.h"

#include <algorithm>
#include <utility>

#include "handles.h"
#include "sampling.h"

namespace power {
namespace {

// the test hook's perturbation: the runner-up ends 0.5 above the top logit
void raise_runner_up(float * logits, int32_t n_vocab) {
    int32_t top = 0;
    for (int32_t i = 1; i < n_vocab; i++) {
        if (logits[i] > logits[top]) top = i;
    }
    int32_t second = top == 0 ? 1 : 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        if (i != top && logits[i] > logits[second]) second = i;
    }
    logits[second] = logits[top] + 0.5f;
}

} // namespace

void inspect_sampled_row(row_capture & cap, const target_sampler & sampler, llama_pos pos, float * logits, int32_t n_vocab) {
    if (pos != cap.position && pos != cap.perturb_position) {
        return;
    }
    const bool perturb = pos == cap.perturb_position && n_vocab > 1;
    if (perturb && !cap.perturb_hidden) {
        raise_runner_up(logits, n_vocab);
    }
    if (pos == cap.position) {
        cap.row.assign(logits, logits + n_vocab);
        cap.captured = true;
        // copies of the chain: the request's own sampler must advance only for its own row
        std::vector<llama_token_data> cur;
        target_sampler copy = sampler.clone();
        cap.row_token       = sample_row(copy, cap.row.data(), n_vocab, cur);
        cap.drawn_from.clear();
        if (!cur.empty() && cur[0].p > 0.0f) {
            cap.drawn_from = cur; // what dist accumulated (sample_row leaves the chain's output there)
        }
        if (static_cast<int32_t>(cap.other.size()) == n_vocab) {
            target_sampler other = sampler.clone();
            cap.other_token      = sample_row(other, cap.other.data(), n_vocab, cur);
        }
    }
    if (perturb && cap.perturb_hidden) {
        raise_runner_up(logits, n_vocab);
    }
}

void note_backend_draw(row_capture & cap, llama_pos pos, llama_token token) {
    if (pos != cap.position) {
        return;
    }
    cap.captured = true;
    cap.backend  = true;
    cap.row.clear();
    cap.row_token = token;
}

} // namespace power
