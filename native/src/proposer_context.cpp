// The context a proposer decodes on (a draft model's, an MTP head's, llama.cpp's draft
// families'): created with the session's threads and attached to the session's threadpool, so
// the target and its proposer share one pool, whichever proposer it is.
#include <stdexcept>

#include "handles.h"
#include "proposer.h"

namespace power {

context_ptr open_proposer_context(llama_model * model, llama_context_params cp, const proposer_run_params & run, const std::string & what) {
    if (run.n_threads > 0) {
        cp.n_threads       = run.n_threads;
        cp.n_threads_batch = run.n_threads;
    }
    cp.no_perf         = true;
    cp.flash_attn_type = run.flash_attn;
    if (!cp.abort_callback) {
        cp.abort_callback      = run.abort_callback;
        cp.abort_callback_data = run.abort_data;
    }
    llama_context * raw = llama_init_from_model(model, cp);
    if (!raw) {
        throw std::runtime_error("llama.cpp could not create " + what);
    }
    context_ptr ctx = adopt_context(raw);
    if (run.threadpool) {
        llama_attach_threadpool(raw, run.threadpool, run.threadpool);
    }
    return ctx;
}

} // namespace power
