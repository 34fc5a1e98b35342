// The context a proposer decodes on (a draft model's, an MTP head's, llama.cpp's draft
// families'): created with the session's threads and attached to the session's threadpool, so
// the target and its proposer share one pool, whichever proposer it is.
#include <stdexcept>

#include "handles.h"
#include "proposer.h"

namespace power {

context_ptr open_proposer_context(llama_model * model, llama_context_params cp, int32_t n_threads, ggml_threadpool * pool,
                                  const std::string & what) {
    if (n_threads > 0) {
        cp.n_threads       = n_threads;
        cp.n_threads_batch = n_threads;
    }
    llama_context * raw = llama_init_from_model(model, cp);
    if (!raw) {
        throw std::runtime_error("llama.cpp could not create " + what);
    }
    context_ptr ctx = adopt_context(raw);
    if (pool) {
        llama_attach_threadpool(raw, pool, pool);
    }
    return ctx;
}

} // namespace power
