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
// tokens that followed it are proposed, as many as draft_length() says are worth a verify row.
class proposer_ngram : public proposer {
  public:
    proposer_ngram(int n_min, int n_max_ngram) : n_min_(n_min), n_max_ngram_(n_max_ngram) {}

    const char * name() const override { return "ngram"; }

    void begin(const std::vector<llama_token> &) override {
        at_risk_.clear();
        failed_.clear();
        drafted_ = 0;
    }

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        drafted_ = 0;
        continued_sequence(history, anchor, seq_);
        const int len = static_cast<int>(seq_.size());
        for (int n = std::min(n_max_ngram_, len - 1); n >= n_min_; n--) {
            const int from = occurrence(n, len - n - 1);
            if (from < 0) {
                continue;
            }
            const int available = std::min(n_max, len - from);
            const int earlier   = occurrence(n, from - n - 1);
            const int count     = std::min(available, draft_length(n_max, earlier < 0 ? 0 : agreement(from, earlier, n_max)));
            out.assign(seq_.begin() + from, seq_.begin() + from + count);
            drafted_ = count;
            return;
        }
    }

    void accept(int n_accepted) override {
        if (drafted_ > 0) {
            record(drafted_, n_accepted);
        }
        drafted_ = 0;
    }

    void restore() override { drafted_ = 0; }

  private:
    static constexpr double row_share = 0.2;

    // where the continuation of the latest occurrence of the n-token suffix that starts at or
    // before `last_start` begins (-1: none)
    int occurrence(int n, int last_start) const {
        const int len              = static_cast<int>(seq_.size());
        const llama_token * suffix = seq_.data() + len - n;
        for (int start = last_start; start >= 0; start--) {
            if (std::equal(suffix, suffix + n, seq_.data() + start)) {
                return start + n;
            }
        }
        return -1;
    }

    // how many tokens two occurrences' continuations share: text the sequence has followed the
    // same way twice is likely to be followed that way again
    int agreement(int a, int b, int n_max) const {
        const int len = static_cast<int>(seq_.size());
        int l         = 0;
        while (l < n_max && a + l < len && seq_[a + l] == seq_[b + l]) {
            l++;
        }
        return l;
    }

    // The draft length. The i-th proposal saves a round only if the first i are accepted, and
    // its verify row costs about a fifth of a one-row round on a CPU (Gemma 3 270M on 2 cores: 4-6
    // ms a row, 19-25 ms a round). That survival is estimated from this request's own drafts (Kaplan-Meier:
    // at each length, the drafts that reached it and the ones rejected there, with one
    // pseudo-draft at even odds so that the first rounds draft a little), and the draft stops
    // where it falls under the row's share. Where two occurrences agree further, the draft goes
    // that far. The share is a constant, not a measurement, so that a request drafts the same
    // way on every run (a GPU's rows are cheaper: there it drafts shorter than it could).
    int draft_length(int n_max, int agree) {
        if (static_cast<int>(at_risk_.size()) < n_max + 1) {
            at_risk_.resize(n_max + 1, 0.0);
            failed_.resize(n_max + 1, 0.0);
        }
        double survival = 1.0;
        int length      = 0;
        for (int i = 1; i <= n_max; i++) {
            survival *= 1.0 - (failed_[i] + 0.5) / (at_risk_[i] + 1.0);
            if (survival < row_share) {
                break;
            }
            length = i;
        }
        return std::max({1, length, agree});
    }

    // a draft the transaction cut short under a grammar counts as rejected where it was cut:
    // under a grammar the estimate errs towards shorter drafts
    void record(int drafted, int accepted) {
        for (int i = 1; i <= std::min(drafted, accepted + 1); i++) {
            at_risk_[i] += 1.0;
        }
        if (accepted < drafted) {
            failed_[accepted + 1] += 1.0;
        }
    }

    int n_min_;
    int n_max_ngram_;
    std::vector<llama_token> seq_; // reused: no allocation per round once grown
    // per draft length i (1-based): this request's drafts that reached i, and those rejected at i
    std::vector<double> at_risk_, failed_;
    int drafted_ = 0; // this round's proposals (0: another member's round, or none)
};

} // namespace

std::unique_ptr<proposer> make_proposer_none() {
    return std::make_unique<proposer_none>();
}

std::unique_ptr<proposer> make_proposer_ngram(int n_min, int n_max_ngram) {
    return std::make_unique<proposer_ngram>(n_min, n_max_ngram);
}

} // namespace power
