#pragma once
// CPU threads for llama.cpp's graphs: how many by default, and one persistent ggml threadpool
// per session that the target context and its proposer's context share.
//
// Why (measured on 2 cores, bench/RESULTS-cpu.md): without a threadpool every llama_decode
// creates and joins its own worker threads; with a target and a draft context each would keep
// its own spinning workers, and one pool's spin stalls the other's graph. One pool serves both:
// the session's decodes run one after another on the generation thread, so they never need it
// at the same time.

#include <cstdint>
#include <memory>

#include "ggml-cpu.h"

namespace power {

// the thread count a session gets when none is asked for: the physical cores this process may
// run on (llama.cpp's own default); without SMT and with four cores or more, one less, so that
// the app's processes (UI, main process, engine host's JS) have a core without stalling ggml's
// barriers
int32_t default_thread_count();

// polling level of the session pools (0..100, ggml_threadpool_params.poll): workers spin this
// long for the next graph before sleeping. Low, because the next graph of a round follows within
// microseconds, while a longer spin only takes the core from everything else between rounds
constexpr uint32_t default_threadpool_poll = 1;

struct threadpool_deleter {
    void operator()(ggml_threadpool * pool) const;
};
using threadpool_ptr = std::unique_ptr<ggml_threadpool, threadpool_deleter>;

// a persistent pool of n_threads (the calling thread counts as one) from the loaded CPU backend;
// null when the backend exports no threadpool (llama.cpp then makes one per graph)
threadpool_ptr make_threadpool(int32_t n_threads, uint32_t poll);

} // namespace power
