#include "log_capture.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>

#include "llama.h"
#include "log.h" // libllama-common's logger

namespace power {
namespace {

struct captured_line {
    uint64_t seq;
    ggml_log_level level;
    std::string text;
};

struct capture_state {
    std::mutex mutex;
    std::deque<captured_line> lines; // most recent lines, bounded
    std::string partial;             // a line still being written (ggml logs in pieces)
    ggml_log_level partial_level = GGML_LOG_LEVEL_NONE;
    uint64_t next_seq            = 0;
    bool echo                    = false;
};

capture_state & state() {
    static capture_state s;
    return s;
}

constexpr size_t max_lines = 256;

void on_log(ggml_log_level level, const char * text, void * /*user_data*/) {
    capture_state & s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.echo) {
        std::fputs(text, stderr);
    }
    // CONT continues the previous line's level
    if (level != GGML_LOG_LEVEL_CONT) {
        s.partial_level = level;
    }
    s.partial += text;
    size_t nl;
    while ((nl = s.partial.find('\n')) != std::string::npos) {
        s.lines.push_back({s.next_seq++, s.partial_level, s.partial.substr(0, nl)});
        s.partial.erase(0, nl + 1);
        if (s.lines.size() > max_lines) {
            s.lines.pop_front();
        }
    }
}

} // namespace

void log_capture_install() {
    const char * echo = std::getenv("POWER_LLAMA_LOG");
    state().echo      = echo != nullptr && *echo != '\0' && std::string(echo) != "0";
    llama_log_set(on_log, nullptr);
    // libllama-common (llama.cpp's own proposers) logs through its own logger, INFO to stdout:
    // that would mix with the CLI's output, so it is silent unless POWER_LLAMA_LOG asks for it
    if (!state().echo) {
        common_log_pause(common_log_main());
    }
}

ggml_log_callback log_capture_callback() {
    return on_log;
}

uint64_t log_capture_mark() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().next_seq;
}

namespace {

// the error (and, with `warnings`, warning) lines logged since `mark`, joined with "; "
std::string lines_since(uint64_t mark, bool warnings) {
    capture_state & s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    std::string out;
    for (const auto & line : s.lines) {
        if (line.seq < mark) {
            continue;
        }
        if (line.level != GGML_LOG_LEVEL_ERROR && !(warnings && line.level == GGML_LOG_LEVEL_WARN)) {
            continue;
        }
        std::string text = line.text;
        while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) {
            text.pop_back();
        }
        if (text.empty()) {
            continue;
        }
        if (!out.empty()) {
            out += "; ";
        }
        out += text;
    }
    return out;
}

} // namespace

std::string log_capture_problems_since(uint64_t mark) {
    return lines_since(mark, true);
}

std::string log_capture_errors_since(uint64_t mark) {
    return lines_since(mark, false);
}

bool log_capture_contains_since(uint64_t mark, const std::string & needle) {
    capture_state & s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto & line : s.lines) {
        if (line.seq >= mark && line.text.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace power
