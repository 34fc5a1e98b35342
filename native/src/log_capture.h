#pragma once
// llama.cpp and ggml report why a load failed only through their log callback; we keep the
// recent lines so a failure can be turned into an error message that says why.

#include <cstdint>
#include <string>

#include "ggml.h"

namespace power {

// routes llama.cpp/ggml logging into the capture (and to stderr when POWER_LLAMA_LOG is set)
void log_capture_install();

// the callback itself, for the libraries with a logger of their own (mtmd: media.cpp)
ggml_log_callback log_capture_callback();

// a position in the log stream, to ask later for what was logged since
uint64_t log_capture_mark();

// the warning and error lines logged since `mark`, joined with "; " (empty when none)
std::string log_capture_problems_since(uint64_t mark);

// the error lines alone logged since `mark` (a job whose warnings are not why it failed)
std::string log_capture_errors_since(uint64_t mark);

// whether a line logged since `mark` (any level) contains `needle`
bool log_capture_contains_since(uint64_t mark, const std::string & needle);

} // namespace power
