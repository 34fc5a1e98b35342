#include "media.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "log_capture.h"
#include "mtmd-helper.h"
#include "mtmd.h"
#include "session_open.h"

namespace power {

// A projector's mtmd context, one per model and settings (open_projector), used by each of its
// sessions in turn: mtmd keeps an encode's output in the context until the next encode, and
// two sessions of one model may run at once.
struct shared_projector {
    mtmd_context * ctx = nullptr;
    std::mutex use; // held while a session tokenizes with it or encodes through it

    explicit shared_projector(mtmd_context * c) : ctx(c) { live().projectors++; }
    ~shared_projector() {
        mtmd_free(ctx);
        live().projectors--;
    }
    shared_projector(const shared_projector &)             = delete;
    shared_projector & operator=(const shared_projector &) = delete;
};

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

// the part of the prompt one chunk holds: positions [start, start + n_pos)
struct prompt_piece {
    const mtmd_input_chunk * chunk = nullptr;
    size_t start                   = 0;
    size_t n_pos                   = 0;
    const llama_token * tokens     = nullptr; // a text chunk's tokens (n_pos of them)
    size_t image                   = 0;       // an image chunk's file, its index in the prompt's files
};

// the positions of committed state `pieces` can keep: its text tokens and its images (the same
// file at the same start, whole) up to the first difference; never past the prompt's last token,
// whose row the request's prefill draws the first token from
size_t reusable_prefix(const session_core & core, const media_prompt & prompt, const std::vector<prompt_piece> & pieces,
                       size_t n_positions) {
    const size_t limit = std::min(core.committed.size(), n_positions - 1);
    size_t keep        = 0;
    for (const prompt_piece & p : pieces) {
        if (!p.tokens) {
            const auto span = std::find_if(core.media.begin(), core.media.end(), [&](const media_span & m) { return m.start == p.start; });
            const std::vector<uint8_t> & file = *prompt.files[p.image];
            const bool same = span != core.media.end() && span->file && span->n_pos == p.n_pos && span->file->size() == file.size() &&
                              (file.empty() || std::memcmp(span->file->data(), file.data(), file.size()) == 0);
            if (!same || p.start + p.n_pos > limit) {
                return keep;
            }
            keep = p.start + p.n_pos;
            continue;
        }
        for (size_t i = 0; i < p.n_pos; i++) {
            if (keep >= limit || core.committed[keep] != p.tokens[i]) {
                return keep;
            }
            keep++;
        }
    }
    return keep;
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
        note_target_decode(core, batch.get().n_tokens);
        observe_target(core, batch.get());
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
    const std::string & path = core.params.projector;
    // one projector per model and settings, shared by the sessions that have them: the encoder
    // runs with the threads and the Flash Attention choice its context was made with (Flash
    // Attention rounds the embeddings otherwise), so a session gets the embeddings it would get
    // from a projector of its own
    const std::string key = "projector\n" + path + "\nthreads " + std::to_string(core.params.n_threads) + "\nflash attention " +
                            std::to_string(static_cast<int>(core.params.flash_attn));
    std::string why;
    std::shared_ptr<void> held = model_attachment(core.model.get(), key, [&]() -> std::shared_ptr<void> {
        mtmd_context_params mp = mtmd_context_params_default();
        mp.use_gpu             = true; // the first GPU device when there is one, as llama-server's default
        mp.print_timings       = false;
        mp.n_threads           = core.params.n_threads;
        mp.flash_attn_type     = core.params.flash_attn;
        mp.warmup              = false;
        const uint64_t mark    = log_capture_mark();
        mtmd_context * raw     = mtmd_init_from_file(path.c_str(), core.model.get(), mp);
        if (!raw) {
            why = log_capture_errors_since(mark);
            return nullptr;
        }
        return std::make_shared<shared_projector>(raw);
    });
    if (!held) {
        return "the projector " + path + " could not be loaded for this model" + (why.empty() ? "" : ": " + why);
    }
    std::shared_ptr<shared_projector> projector = std::static_pointer_cast<shared_projector>(held);
    if (!mtmd_support_vision(projector->ctx)) {
        return "the projector " + path + " takes no images (an audio projector): Power reads images only";
    }
    if (mtmd_decode_use_mrope(projector->ctx)) {
        // M-RoPE gives an image fewer positions than embeddings: the session's positions would
        // no longer be its committed rows, which every rollback counts on
        return "the projector " + path + " places images with M-RoPE positions, which this engine does not support yet";
    }
    core.projector = std::move(projector);
    return "";
}

std::string media_problem(const session_core & core, const media_prompt & prompt) {
    if (!core.projector) {
        return "this session has no projector: a prompt with images needs the model's mmproj-*.gguf (the session option projector)";
    }
    const size_t markers = count_markers(prompt.text);
    if (markers != prompt.files.size()) {
        return "the prompt has " + std::to_string(markers) + " image marker(s) " + media_marker() + " for " +
               std::to_string(prompt.files.size()) + " image(s)";
    }
    return "";
}

media_outcome evaluate_media_prompt(session_core & core, const media_prompt & prompt, std::vector<llama_token> & positions) {
    shared_projector & projector = *core.projector;
    mtmd_context * mctx          = projector.ctx;
    chunks_ptr chunks(mtmd_input_chunks_init());
    {
        std::lock_guard<std::mutex> hold(projector.use);
        std::vector<bitmap_ptr> bitmaps;
        for (size_t i = 0; i < prompt.files.size(); i++) {
            const std::vector<uint8_t> & file = *prompt.files[i];
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
            // its chunks name the file they come from (an image may take several chunks)
            mtmd_bitmap_set_id(bitmap.get(), std::to_string(i).c_str());
            bitmaps.push_back(std::move(bitmap));
        }
        std::vector<const mtmd_bitmap *> raw_bitmaps;
        for (const bitmap_ptr & b : bitmaps) {
            raw_bitmaps.push_back(b.get());
        }
        mtmd_input_text text{prompt.text.c_str(), prompt.text.size(), prompt.add_special, true};
        const uint64_t mark = log_capture_mark();
        const int32_t rc    = mtmd_tokenize(mctx, chunks.get(), &text, raw_bitmaps.data(), raw_bitmaps.size());
        if (rc != 0) {
            const std::string why = log_capture_errors_since(mark);
            throw std::runtime_error(std::string(rc == 1 ? "the prompt's image markers do not match its images"
                                                         : "an image could not be prepared for the projector") +
                                     (why.empty() ? "" : ": " + why));
        }
    }
    // the whole prompt as committed will hold it: text tokens, media_position per image position
    const size_t n_chunks = mtmd_input_chunks_size(chunks.get());
    std::vector<prompt_piece> pieces;
    positions.clear();
    size_t n_media = 0;
    for (size_t c = 0; c < n_chunks; c++) {
        prompt_piece p;
        p.chunk = mtmd_input_chunks_get(chunks.get(), c);
        p.start = positions.size();
        if (mtmd_input_chunk_get_type(p.chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
            p.tokens = mtmd_input_chunk_get_tokens_text(p.chunk, &p.n_pos);
            positions.insert(positions.end(), p.tokens, p.tokens + p.n_pos);
        } else {
            p.n_pos = static_cast<size_t>(mtmd_input_chunk_get_n_pos(p.chunk));
            p.image = std::stoul(mtmd_input_chunk_get_id(p.chunk));
            if (p.image >= prompt.files.size()) {
                throw std::runtime_error("the projector named an image the prompt does not hold");
            }
            positions.insert(positions.end(), p.n_pos, media_position);
            n_media += p.n_pos;
        }
        pieces.push_back(p);
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

    // what the last request left that this prompt repeats stays: the rest is cut, or, where the
    // target cannot go back that far (recurrent state, a sliding-window cache), the whole
    // sequence goes and the prompt is evaluated from the start
    media_outcome out;
    out.reused = reusable_prefix(core, prompt, pieces, positions.size());
    if (out.reused < core.committed.size()) {
        const int32_t back = static_cast<int32_t>(core.committed.size() - out.reused);
        if (cut_target(core, static_cast<llama_pos>(out.reused), back)) {
            core.committed.resize(out.reused);
        } else {
            forget_target(core);
            out.reused = 0;
        }
    }
    const auto stopped = [&] {
        forget_target(core);
        out.completed = false;
        return out;
    };
    const int32_t n_batch = static_cast<int32_t>(llama_n_batch(core.ctx.get()));
    const size_t n_embd   = static_cast<size_t>(llama_model_n_embd_inp(core.model.get()));
    std::vector<float> embd;
    for (const prompt_piece & p : pieces) {
        if (p.start + p.n_pos <= core.committed.size()) {
            continue; // kept
        }
        if (p.tokens) {
            const size_t from = core.committed.size() - p.start; // a kept head of the chunk: 0 unless the cut fell inside it
            const size_t to   = p.start + p.n_pos == positions.size() ? p.n_pos - 1 : p.n_pos; // the last token: the request's prefill
            bool done         = false;
            try {
                done = evaluate_text(core, p.tokens, from, to);
            } catch (...) {
                forget_target(core);
                throw;
            }
            if (!done) {
                return stopped();
            }
            continue;
        }
        const uint64_t at = log_capture_mark();
        int32_t ec        = 0;
        {
            // the embeddings leave the shared context before the next session's encode replaces them
            std::lock_guard<std::mutex> hold(projector.use);
            ec = mtmd_encode_chunk(mctx, p.chunk);
            if (ec == 0) {
                const float * from = mtmd_get_output_embd(mctx);
                embd.assign(from, from + mtmd_input_chunk_get_n_tokens(p.chunk) * n_embd);
            }
        }
        out.images_encoded += ec == 0 ? 1 : 0;
        const llama_pos n_past = static_cast<llama_pos>(core.committed.size());
        llama_pos new_n_past   = n_past;
        if (ec == 0) {
            ec = mtmd_helper_decode_image_chunk(mctx, core.ctx.get(), p.chunk, embd.data(), n_past, 0, n_batch, &new_n_past, nullptr,
                                                nullptr);
        }
        core.rs_room = 0;
        if (ec != 0) {
            if (core.cancel.load()) {
                return stopped();
            }
            forget_target(core);
            const std::string why = log_capture_errors_since(at);
            throw std::runtime_error("an image could not be evaluated through the projector (code " + std::to_string(ec) + ")" +
                                     (why.empty() ? "" : ": " + why));
        }
        core.committed.insert(core.committed.end(), static_cast<size_t>(new_n_past - n_past), media_position);
        core.media.push_back(media_span{p.start, static_cast<size_t>(new_n_past - n_past), prompt.files[p.image]});
    }
    return out;
}

} // namespace power
