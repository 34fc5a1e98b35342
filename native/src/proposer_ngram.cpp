#include <algorithm>

#include "proposer.h"

namespace power {
namespace {

class proposer_none : public proposer {
  public:
    const char * name() const override { return "none"; }
    void begin(const std::vector<llama_token> &) override {}
    void propose(const std::vector<llama_token> &, llama_token, int, std::vector<llama_token> & out) override { out.clear(); }
};

// Prompt-lookup decoding: the suffix (last n tokens of history + anchor, n from n_max_ngram
// down to n_min) is searched for in the earlier sequence, most recent occurrence first; the
// tokens that followed it are proposed.
class proposer_ngram : public proposer {
  public:
    proposer_ngram(int n_min, int n_max_ngram) : n_min_(n_min), n_max_ngram_(n_max_ngram) {}

    const char * name() const override { return "ngram"; }
    void begin(const std::vector<llama_token> &) override {}

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        continued_sequence(history, anchor, seq_);
        const int len = static_cast<int>(seq_.size());
        for (int n = std::min(n_max_ngram_, len - 1); n >= n_min_; n--) {
            const llama_token * suffix = seq_.data() + len - n;
            // most recent earlier occurrence whose continuation exists
            for (int start = len - n - 1; start >= 0; start--) {
                if (!std::equal(suffix, suffix + n, seq_.data() + start)) {
                    continue;
                }
                const int from  = start + n;
                const int count = std::min(n_max, len - from);
                out.assign(seq_.begin() + from, seq_.begin() + from + count);
                return;
            }
        }
    }

  private:
    int n_min_;
    int n_max_ngram_;
    std::vector<llama_token> seq_; // reused: no allocation per round once grown
};

} // namespace

std::unique_ptr<proposer> make_proposer_none() {
    return std::make_unique<proposer_none>();
}

std::unique_ptr<proposer> make_proposer_ngram(int n_min, int n_max_ngram) {
    return std::make_unique<proposer_ngram>(n_min, n_max_ngram);
}

} // namespace power
