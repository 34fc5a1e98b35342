#pragma once
// Images in the prompt through llama.cpp's multimodal library (tools/mtmd, compiled into the
// addon: native/CMakeLists.txt). A session opened with a projector takes a prompt as text with
// one marker per image; mtmd decodes each image, tokenizes the text around it and encodes the
// image through the projector into embeddings the target evaluates at their own positions
// (docs/architecture.md "Images").

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "session_core.h"

namespace power {

// the marker that stands for an image in a prompt's text (mtmd's default, "<__media__>")
const char * media_marker();

struct media_prompt {
    std::string text; // the whole prompt, one media_marker() per image
    // the images' encoded bytes (PNG, JPEG, BMP, ...), in marker order; the session keeps those it
    // committed, to know them again in the next prompt (media_span)
    std::vector<std::shared_ptr<const std::vector<uint8_t>>> files;
    bool add_special = true; // a BOS first where the model wants one (special tokens are always parsed)
};

// Gives the session the projector core.params.projector on its model: the one the model's
// sessions with the same threads and Flash Attention setting share, loaded by the first of them
// and freed with the model. Returns "" on success, else why not (a file that is no projector,
// one made for another model's embedding width, a projector whose positions this engine does not
// place).
std::string open_projector(session_core & core);

// "" when the session can evaluate a prompt with `n_images` images; else why not: no projector,
// text with another number of markers. Every strategy follows images (proposer_history,
// session_core.h)
std::string media_problem(const session_core & core, const media_prompt & prompt);

struct media_outcome {
    bool completed         = true; // false: a cancel stopped it (the sequence is then empty)
    size_t reused          = 0;    // the prompt's positions whose state the last request left (kept)
    int32_t images_encoded = 0;    // image chunks run through the projector (those not kept)
};

// Evaluates the prompt into the target's sequence, all but its last token (the request's prefill
// evaluates that one, for the first token's row). What the sequence holds of the prompt stays:
// its text tokens and its images (the same file's bytes at the same position), up to the first
// difference; the rest of the sequence is cut, or emptied where the target cannot cut there.
// `positions` gets the whole prompt as committed holds it (media_position where an image's
// embeddings are). Throws std::runtime_error with the reason: an image that cannot be decoded, a
// prompt longer than the context, a failed decode.
media_outcome evaluate_media_prompt(session_core & core, const media_prompt & prompt, std::vector<llama_token> & positions);

} // namespace power
