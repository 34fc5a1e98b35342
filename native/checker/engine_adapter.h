#pragma once
// The one place where the checker meets engine fields that are still being added to native/src
// (llama.cpp backend sampling: sampling_params::backend, session_params::proposer_backend_sampling,
// row_capture::backend). Each is detected at compile time: where the engine has the field the
// checker sets it, where it does not the "backend" sampling path of every case reports
// "unsupported: this engine has no backend sampling". Define POWER_CHECK_NO_BACKEND_SAMPLING to
// switch the path off by hand.

#include <utility>

namespace power_check::adapt {

namespace detail {
template <class T> auto set_backend(T & p, bool on, int) -> decltype(p.backend = on, bool()) {
    p.backend = on;
    return true;
}
template <class T> bool set_backend(T &, bool, long) {
    return false;
}

template <class T> auto set_proposer_backend(T & p, bool on, int) -> decltype(p.proposer_backend_sampling = on, bool()) {
    p.proposer_backend_sampling = on;
    return true;
}
template <class T> bool set_proposer_backend(T &, bool, long) {
    return false;
}

template <class T> auto drawn_on_backend(const T & c, int) -> decltype(bool(c.backend)) {
    return c.backend;
}
template <class T> bool drawn_on_backend(const T &, long) {
    return false;
}
} // namespace detail

// sampling_params: draw the target's tokens with llama.cpp's backend samplers (false: on the CPU).
// Returns whether the engine has that path.
template <class SamplingParams> bool set_backend_sampling(SamplingParams & p, bool on) {
#ifdef POWER_CHECK_NO_BACKEND_SAMPLING
    (void)p;
    return !on;
#else
    return detail::set_backend(p, on, 0) || !on;
#endif
}

// session_params: proposers draft greedily in their own graph (no effect where absent)
template <class SessionParams> void set_proposer_backend_sampling(SessionParams & p, bool on) {
#ifndef POWER_CHECK_NO_BACKEND_SAMPLING
    detail::set_proposer_backend(p, on, 0);
#else
    (void)p;
    (void)on;
#endif
}

// row_capture: the captured token was drawn on the backend, so no logits row was kept
template <class RowCapture> bool capture_drawn_on_backend(const RowCapture & c) {
    return detail::drawn_on_backend(c, 0);
}

} // namespace power_check::adapt
