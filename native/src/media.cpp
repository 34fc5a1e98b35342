#include "media.h"

#include <memory>
#include <mutex>
#include <stdexcept>

#include "log_capture.h"
#include "mtmd-helper.h"
#include "mtmd.h"
#include "proposer_common_checks.h"
#include "session_open.h"

namespace power {
namespace {

struct bitmap_deleter {
    void operator()(mtmd_bitmap * b) const { mtmd_bitmap_free(b); }
};
struct chunks_deleter {
    void operator()(mtmd_input_chunks * c) const { mtmd_input_chunks_free(c); }
};
using bitmap_ptr = std::unique_ptr<mtmd_bitmap, bitmap_deleter>;
using chunks_ptr = std::unique_ptr<mtmd_input_chunks, chunks_deleter>;

constexpr int32_t decode_aborted = 2; // llama_decode: the abort callback stopped it

// mtmd and its clip encoder log through a logger of their own: into the capture, as llama.cpp does
void route_mtmd_log() {
    static std::once_flag once;
    std::call_once(once, [] { mtmd_helper_log_set(log_capture_callback(), nullptr); });
}

// the strategies whose proposers read only tokens: they can follow a prompt with images
bool follows_text_only(const std::string & member) {
    return member == "none" || member == "ngram" || member == "draft-model" ||
           (member != "mtp" && common_type_of(member) != COMMON_SPECULATIVE_TYPE_COUNT && !common_strategy_needs_draft(member));
}

size_t count_markers(const std::string & text) {
    const std::string marker = media_marker();
    size_t n                 = 0;
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + marker.size())) {
        n++;
    }
    return n;
}

// the text chunk's tokens [from, to) into the target at committed.size() onwards, no logits
// (the request's prefill draws the first token's row); false when a cancel aborted a decode
bool evaluate_text(session_core & core, const llama_token * tokens, size_t from, size_t to) {
    batch_owner & batch = *core.batch;
    while (from < to) {
        const size_t end = std::min(to, from + static_cast<size_t>(batch.capacity()));
        batch.clear();
        for (size_t i = from; i < end; i++) {
            batch.add(tokens[i], static_cast<llama_pos>(core.committed.size() + (i - from)), false);
        }
        core.rs_room     = 0;
        const int32_t rc = llama_decode(core.ctx.get(), batch.get());
        if (rc == decode_aborted) {
            return false;
        }
        if (rc != 0) {
            throw std::runtime_error("the prompt's text around its images could not be evaluated (llama_decode code " + std::to_string(rc) +
                                     ")");
        }
        // no observe_target: the proposers that take images read tokens only (media_problem)
        note_target_decode(core, batch.get().n_tokens);
        core.committed.insert(core.committed.end(), tokens + from, tokens + end);
        from = end;
    }
    return true;
}

} // namespace

const char * media_marker() {
    return mtmd_default_marker();
}

std::string open_projector(session_core & core) {
    route_mtmd_log();
    mtmd_context_params mp = mtmd_context_params_default();
    mp.use_gpu             = true; // the first GPU device when there is one, as llama-server's default
    mp.print_timings       = false;
    mp.n_threads           = core.params.n_threads;
    mp.flash_attn_type     = core.params.flash_attn;
    mp.warmup              = false;
    const uint64_t mark    = log_capture_mark();
    mtmd_context * raw     = mtmd_init_from_file(core.params.projector.c_str(), core.model.get(), mp);
    if (!raw) {
        const std::string why = log_capture_errors_since(mark);
        return "the projector " + core.params.projector + " could not be loaded for this model" + (why.empty() ? "" : ": " + why);
    }
    core.projector = std::shared_ptr<mtmd_context>(raw, mtmd_free);
    if (!mtmd_support_vision(raw)) {
        core.projector.reset();
        return "the projector " + core.params.projector + " takes no images (an audio projector): Power reads images only";
    }
    if (mtmd_decode_use_mrope(raw)) {
        // M-RoPE gives an image fewer positions than embeddings: the session's positions would
        // no longer be its committed rows, which every rollback counts on
        core.projector.reset();
        return "the projector " + core.params.projector + " places images with M-RoPE positions, which this engine does not support yet";
    }
    return "";
}

std::string media_problem(const session_core & core, const media_prompt & prompt) {
    if (!core.projector) {
        return "this session has no projector: a prompt with images needs the model's mmproj-*.gguf (the session option projector)";
    }
    for (const std::string & member : strategy_members(core.params.strategy)) {
        if (!follows_text_only(member)) {
            return "strategy '" + member +
                   "' drafts from the target's hidden rows, which an image's positions do not give it: images go with none, ngram, "
                   "draft-model or llama.cpp's n-gram families";
        }
    }
    const size_t markers = count_markers(prompt.text);
    if (markers != prompt.files.size()) {
        return "the prompt has " + std::to_string(markers) + " image marker(s) " + media_marker() + " for " +
               std::to_string(prompt.files.size()) + " image(s)";
    }
    return "";
}

bool evaluate_media_prompt(session_core & core, const media_prompt & prompt, std::vector<llama_token> & positions) {
    mtmd_context * mctx = core.projector.get();
    std::vector<bitmap_ptr> bitmaps;
    for (size_t i = 0; i < prompt.files.size(); i++) {
        const std::vector<uint8_t> & file = prompt.files[i];
        const uint64_t mark               = log_capture_mark();
        mtmd_helper_bitmap_wrapper w =
            file.empty() ? mtmd_helper_bitmap_wrapper{nullptr, nullptr}
                         : mtmd_helper_bitmap_init_from_buf(mctx, file.data(), file.size(), false, mtmd_helper_init_opt_default());
        bitmap_ptr bitmap(w.bitmap);
        if (!bitmap || mtmd_bitmap_is_audio(bitmap.get())) {
            const std::string why = log_capture_errors_since(mark);
            throw std::runtime_error("image " + std::to_string(i + 1) + " (" + std::to_string(file.size()) +
                                     " bytes) is not an image Power can read (PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC or PNM)" +
                                     (why.empty() ? "" : ": " + why));
        }
        bitmaps.push_back(std::move(bitmap));
    }
    std::vector<const mtmd_bitmap *> raw_bitmaps;
    for (const bitmap_ptr & b : bitmaps) {
        raw_bitmaps.push_back(b.get());
    }
    chunks_ptr chunks(mtmd_input_chunks_init());
    mtmd_input_text text{prompt.text.c_str(), prompt.text.size(), prompt.add_special, true};
    const uint64_t mark = log_capture_mark();
    const int32_t rc    = mtmd_tokenize(mctx, chunks.get(), &text, raw_bitmaps.data(), raw_bitmaps.size());
    if (rc != 0) {
        const std::string why = log_capture_errors_since(mark);
        throw std::runtime_error(std::string(rc == 1 ? "the prompt's image markers do not match its images"
                                                     : "an image could not be prepared for the projector") +
                                 (why.empty() ? "" : ": " + why));
    }
    const size_t n_chunks = mtmd_input_chunks_size(chunks.get());
    // the whole prompt as committed will hold it: text tokens, media_position per image position
    positions.clear();
    size_t n_media = 0;
    for (size_t c = 0; c < n_chunks; c++) {
        const mtmd_input_chunk * chunk = mtmd_input_chunks_get(chunks.get(), c);
        if (mtmd_input_chunk_get_type(chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
            size_t n                   = 0;
            const llama_token * tokens = mtmd_input_chunk_get_tokens_text(chunk, &n);
            positions.insert(positions.end(), tokens, tokens + n);
        } else {
            const size_t n = static_cast<size_t>(mtmd_input_chunk_get_n_pos(chunk));
            positions.insert(positions.end(), n, media_position);
            n_media += n;
        }
    }
    const uint32_t n_ctx = llama_n_ctx(core.ctx.get());
    if (positions.size() + 1 > n_ctx) {
        throw std::runtime_error("the prompt with its images is " + std::to_string(positions.size()) + " positions (" +
                                 std::to_string(n_media) + " of them for " + std::to_string(prompt.files.size()) +
                                 " image(s)) but the context holds " + std::to_string(n_ctx) +
                                 " (with room for at least one generated token)");
    }
    if (positions.empty() || positions.back() == media_position) {
        // the first token is drawn from the last text row (the request's prefill evaluates it)
        throw std::runtime_error("the prompt ends with an image: it needs text after its last image");
    }
    forget_target(core);
    const int32_t n_batch = static_cast<int32_t>(llama_n_batch(core.ctx.get()));
    for (size_t c = 0; c < n_chunks; c++) {
        const mtmd_input_chunk * chunk = mtmd_input_chunks_get(chunks.get(), c);
        if (mtmd_input_chunk_get_type(chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
            size_t n                   = 0;
            const llama_token * tokens = mtmd_input_chunk_get_tokens_text(chunk, &n);
            const size_t to            = c + 1 == n_chunks && n > 0 ? n - 1 : n; // the last token: the request's prefill
            bool done                  = false;
            try {
                done = evaluate_text(core, tokens, 0, to);
            } catch (...) {
                forget_target(core);
                throw;
            }
            if (!done) {
                forget_target(core);
                return false;
            }
            continue;
        }
        const llama_pos n_past = static_cast<llama_pos>(core.committed.size());
        llama_pos new_n_past   = n_past;
        const uint64_t at      = log_capture_mark();
        const int32_t ec       = mtmd_helper_eval_chunk_single(mctx, core.ctx.get(), chunk, n_past, 0, n_batch, false, &new_n_past);
        core.rs_room           = 0;
        if (ec != 0) {
            forget_target(core);
            if (core.cancel.load()) {
                return false;
            }
            const std::string why = log_capture_errors_since(at);
            throw std::runtime_error("an image could not be evaluated through the projector (code " + std::to_string(ec) + ")" +
                                     (why.empty() ? "" : ": " + why));
        }
        core.committed.insert(core.committed.end(), static_cast<size_t>(new_n_past - n_past), media_position);
        core.media_end = core.committed.size();
    }
    return true;
}

} // namespace power
