// Chained proposers (llama.cpp's --spec-type list, e.g. "ngram,mtp"): an ordered list of
// members; each round asks them in order and the first non-empty draft wins the round. The
// members that were not asked, or drafted nothing, still follow the committed sequence:
//   - begin, observe_target and restore reach every member: each keeps its own state in step
//     with the target's batches (the MTP head mirrors every batch's hidden rows, llama.cpp's
//     EAGLE3 encodes every batch, the draft model catches up by common prefix);
//   - accept(n) reaches every member too. Each proposer's accept() already tells its own
//     proposals from another's round: the draft model, the MTP head and our n-gram keep nothing
//     per round (position-driven state), and llama.cpp's adapter (proposer_common.cpp) reports
//     only a round it drafted itself (a member that drafted nothing has nothing to account for,
//     as llama-server does after an empty draft). llama.cpp's EAGLE3 would also rebase its
//     deferred boundary row after another member's round; without it, its next draft starts
//     from a stale row (fewer acceptances, never another output).
// A grammar's copy goes to the member being asked, fresh for each (a member that drafted nothing
// under it may have advanced it). Proposals are advisory: the target decides every token.
#include <stdexcept>
#include <string>
#include <utility>

#include "proposer.h"

namespace power {
namespace {

class proposer_chain : public proposer {
  public:
    explicit proposer_chain(std::vector<std::unique_ptr<proposer>> members) : members_(std::move(members)) {
        if (members_.size() < 2) {
            throw std::runtime_error("a chain of proposers needs at least two members");
        }
        for (size_t i = 0; i < members_.size(); i++) {
            name_ += (i ? "," : "") + std::string(members_[i]->name());
        }
    }

    const char * name() const override { return name_.c_str(); }

    int last_member() const override { return last_; }

    draft_evidence last_evidence(int n_proposed) const override {
        return last_ >= 0 ? members_[static_cast<size_t>(last_)]->last_evidence(n_proposed) : draft_evidence{};
    }

    void begin(const std::vector<llama_token> & history) override {
        last_ = -1;
        for (auto & m : members_) {
            m->begin(history);
        }
    }

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        last_ = -1;
        for (size_t i = 0; i < members_.size(); i++) {
            proposer & m = *members_[i];
            if (guide_) {
                // each member walks its own copy from the anchor
                walk_.reset(llama_sampler_clone(guide_));
                m.guide(walk_.get(), guide_vocab_);
            }
            m.place(n_media_);
            m.propose(history, anchor, n_max, out);
            m.guide(nullptr, 0);
            if (!out.empty()) {
                last_ = static_cast<int>(i);
                return;
            }
        }
    }

    void observe_target(const llama_batch & batch) override {
        for (auto & m : members_) {
            m->observe_target(batch);
        }
    }

    void accept(int n_accepted) override {
        for (auto & m : members_) {
            m->accept(n_accepted);
        }
    }

    void restore() override {
        for (auto & m : members_) {
            m->restore();
        }
    }

  private:
    std::vector<std::unique_ptr<proposer>> members_;
    std::string name_;
    int last_ = -1;
    sampler_ptr walk_; // the asked member's copy of the grammar
};

} // namespace

std::unique_ptr<proposer> make_proposer_chain(std::vector<std::unique_ptr<proposer>> members) {
    return std::make_unique<proposer_chain>(std::move(members));
}

} // namespace power
