#pragma once
// What must hold before llama.cpp's proposers are created on a target: several mismatches
// (an EAGLE3 layer id past the target's layers, a target graph that does not export layer
// inputs, another hidden size) end in GGML_ABORT inside llama.cpp instead of an error, so they
// are refused here first, each with its reason.

#include <string>

#include "common.h"
#include "llama.h"

namespace power {

// llama.cpp's type behind one of our strategy names (eagle3 -> draft-eagle3, ngram-mod ->
// ngram-mod, ...); COMMON_SPECULATIVE_TYPE_COUNT when the name is not one of them
common_speculative_type common_type_of(const std::string & strategy);

// true for the strategies that run on a draft artifact (eagle3, dflash, dspark)
bool common_strategy_needs_draft(const std::string & strategy);

// the largest K a session takes (K_MAX of the TypeScript contract, which a test holds equal):
// as far as llama.cpp's ngram-mod drafts under llama-server's defaults (64)
constexpr int32_t session_k_max = 64;

// the most proposals per round the strategy can make with this draft (DFlash: block size - 1,
// DSpark: the block size); session_k_max when nothing smaller applies
int32_t common_strategy_max_k(const std::string & strategy, const llama_model * draft);

// "" when `draft` is a Gemma 4 assistant that can draft for `target` through llama.cpp's
// draft-mtp (its context reads the target's KV cache: the last full-attention and the last
// sliding-window layer); otherwise why not. A mismatch there ends in GGML_ASSERT, or in
// attention over views of another shape, inside llama.cpp.
std::string mtp_assistant_problem(const llama_model * target, const llama_model * draft);

// "" when `draft`, loaded with its NextN weights (`draft_mtp_loaded`), can serve as the MTP
// head of `target` (a sidecar: a GGUF of the target's architecture holding the NextN block,
// driven by our mtp proposer on an MTP context of the sidecar); otherwise why not
std::string mtp_sidecar_problem(const llama_model * target, const llama_model * draft, bool draft_mtp_loaded);

// "" when `strategy` with K proposals per round can run on `target` with `draft` (nullptr for
// the n-gram families); otherwise why not, in words a user can act on
std::string common_proposer_problem(const std::string & strategy, int32_t k, const llama_model * target, const llama_model * draft);

} // namespace power
