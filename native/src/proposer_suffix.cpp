// The suffix drafter (docs/speculative-decoding.md "suffix"). Two suffix automata answer "what
// followed the end of this text before, and how often":
//   - the request's: every token the target holds (the chat's earlier turns are in the prompt,
//     a reused prefix is in the history) plus the reply so far, extended as the reply grows and
//     rebuilt when the sequence is cut below what it holds;
//   - the model's store: earlier replies of every session on this model, bounded in tokens
//     (the oldest go first), shared by the model's sessions and held in memory only.
// Each round both give a candidate: the longest suffix of the sequence that occurred before, then
// the most frequent continuation, one token at a time. A token's odds are how often it followed
// (its count against the context's, with half a pseudo-occurrence of something else; the lowest of
// those over the context and its shorter suffixes down to min_context tokens), scaled by how well
// such odds came true for this proposer's earlier drafts from the same source (the request or the
// store) and matches of that length, then by how well they came true at that place in a draft.
// The draft grows while the odds that every token so far is accepted pay for one more verify row:
// that row's share of a round is fitted to this session's own rounds (time from proposing to the
// accept, against the rows verified). The candidate with the larger expected gain is drafted: one
// linear draft, verified as every other; the target still decides every token.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proposer.h"

namespace power {
namespace {

// An online suffix automaton (Blumer et al.; the textbook construction) with each state's number
// of end positions. Transitions sit in one edge array (a state's edges form a list, walked to
// rank continuations) with a hash index for lookups.
class suffix_automaton {
  public:
    suffix_automaton() { clear(); }

    void clear() {
        states_.assign(1, state{});
        edges_.clear();
        index_.clear();
        last_ = 0;
        size_ = 0;
    }

    size_t size() const { return size_; }

    void extend(llama_token c) {
        const int32_t cur = add_state(states_[last_].len + 1, -1, 0);
        int32_t p         = last_;
        while (p != -1 && find(p, c) < 0) {
            add_edge(p, c, cur);
            p = states_[p].link;
        }
        if (p == -1) {
            states_[cur].link = 0;
        } else {
            const int32_t q = edges_[find(p, c)].to;
            if (states_[p].len + 1 == states_[q].len) {
                states_[cur].link = q;
            } else {
                const int32_t clone = add_state(states_[p].len + 1, states_[q].link, states_[q].cnt);
                for (int32_t e = states_[q].first_edge; e >= 0; e = edges_[e].next) {
                    add_edge(clone, edges_[e].token, edges_[e].to);
                }
                while (p != -1) {
                    const int32_t e = find(p, c);
                    if (e < 0 || edges_[e].to != q) {
                        break;
                    }
                    edges_[e].to = clone;
                    p            = states_[p].link;
                }
                states_[q].link   = clone;
                states_[cur].link = clone;
            }
        }
        last_ = cur;
        size_++;
        // the new end position belongs to every suffix of the text: cur and its suffix links.
        // A long run of one token makes that chain as long as the run; past max_chain the
        // shortest contexts stop counting (their odds err low, never the output)
        int32_t v = cur;
        for (int steps = 0; v > 0 && steps < max_chain; steps++, v = states_[v].link) {
            states_[v].cnt++;
        }
    }

    // the state reached from `s` by `c` (-1: none)
    int32_t next(int32_t s, llama_token c) const {
        const int32_t e = find(s, c);
        return e < 0 ? -1 : edges_[e].to;
    }

    int32_t last() const { return last_; }
    int32_t len(int32_t s) const { return states_[s].len; }
    int32_t link(int32_t s) const { return states_[s].link; }
    int32_t count(int32_t s) const { return states_[s].cnt; }

    // the most frequent continuation of state `s`: its token and state, and how many end
    // positions of `s` were followed by something (a separator included); {-1, -1, 0}: none
    struct continuation {
        llama_token token = -1;
        int32_t to        = -1;
        int32_t total     = 0;
    };
    // how many end positions of `s` were followed by `c` (0: none)
    int32_t followed_by(int32_t s, llama_token c) const {
        const int32_t e = find(s, c);
        return e < 0 ? 0 : states_[edges_[e].to].cnt;
    }

    continuation best(int32_t s) const {
        continuation out;
        int32_t top = 0;
        for (int32_t e = states_[s].first_edge; e >= 0; e = edges_[e].next) {
            const int32_t n = states_[edges_[e].to].cnt;
            out.total += n;
            if (edges_[e].token >= 0 && n > top) {
                top       = n;
                out.token = edges_[e].token;
                out.to    = edges_[e].to;
            }
        }
        return out;
    }

    // the longest suffix of `tail` that occurs in the text: its state and length ({0, 0}: none)
    std::pair<int32_t, int32_t> match(const llama_token * tail, size_t n) const {
        int32_t s = 0, l = 0;
        for (size_t i = 0; i < n; i++) {
            while (s > 0 && find(s, tail[i]) < 0) {
                s = states_[s].link;
                l = states_[s].len;
            }
            const int32_t e = find(s, tail[i]);
            if (e >= 0) {
                s = edges_[e].to;
                l++;
            }
        }
        return {s, l};
    }

  private:
    static constexpr int max_chain = 1024;

    struct state {
        int32_t len        = 0;
        int32_t link       = -1;
        int32_t cnt        = 0;
        int32_t first_edge = -1;
    };
    struct edge {
        llama_token token;
        int32_t to;
        int32_t next;
    };

    static uint64_t key(int32_t s, llama_token c) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(s)) << 32) | static_cast<uint32_t>(c);
    }

    int32_t find(int32_t s, llama_token c) const {
        const auto it = index_.find(key(s, c));
        return it == index_.end() ? -1 : it->second;
    }

    int32_t add_state(int32_t len, int32_t link, int32_t cnt) {
        states_.push_back(state{len, link, cnt, -1});
        return static_cast<int32_t>(states_.size()) - 1;
    }

    void add_edge(int32_t from, llama_token c, int32_t to) {
        edges_.push_back(edge{c, to, states_[from].first_edge});
        const int32_t e          = static_cast<int32_t>(edges_.size()) - 1;
        states_[from].first_edge = e;
        index_[key(from, c)]     = e;
    }

    std::vector<state> states_;
    std::vector<edge> edges_;
    std::unordered_map<uint64_t, int32_t> index_;
    int32_t last_ = 0;
    size_t size_  = 0;
};

// the separator between replies in the store: no sequence holds it, so no match crosses it
constexpr llama_token separator = -1;

} // namespace

// Earlier replies on one model, oldest first, and the automaton over them (each reply followed
// by a separator). Bounded in tokens: a reply that would pass the bound drops the oldest replies
// down to three quarters of it, and the automaton is rebuilt over what is left (a suffix
// automaton cannot forget), so rebuilds are rare. Shared by the model's sessions: every use
// holds the lock.
//
// With a file, the replies outlive the process: read when the store is made, each new reply
// appended, the whole file rewritten (to a temporary, then renamed over it) when replies are
// dropped or cleared. The file is the header (magic, version, the vocabulary's size) and one
// record per reply (its length, its tokens), host byte order: it is this machine's. A file made
// for another vocabulary is left as it is and the store stays in memory; a torn last record (a
// crash while appending) or a token the vocabulary lacks is dropped and the file rewritten.
struct suffix_store {
    suffix_store(size_t limit, std::string path, int32_t n_vocab) : limit(limit), path(std::move(path)), n_vocab(n_vocab) {
        if (!this->path.empty()) {
            load();
        }
    }

    std::mutex lock;
    size_t limit;
    std::string path;    // "" : in memory only
    int32_t n_vocab;     // the model's: tokens outside it are never read back
    std::string problem; // why the file is not in use, or the last write failed ("" : none)
    std::vector<std::vector<llama_token>> replies;
    size_t tokens = 0; // in `replies`
    suffix_automaton sam;
    // bumped by clear(): a reply begun before a clear is not added after it (a user who clears
    // the store does not see the reply then on screen come back)
    uint64_t clears = 0;

    void add(const llama_token * reply, size_t n) {
        if (limit == 0 || n == 0) {
            return;
        }
        const size_t keep = std::max<size_t>(1, limit - limit / 4);
        if (n > keep) {
            reply += n - keep; // a reply larger than the store keeps its end
            n = keep;
        }
        if (tokens + n > limit) {
            size_t drop = 0;
            while (drop < replies.size() && tokens + n > keep) {
                tokens -= replies[drop++].size();
            }
            replies.erase(replies.begin(), replies.begin() + static_cast<std::ptrdiff_t>(drop));
            replies.emplace_back(reply, reply + n);
            tokens += n;
            rebuild();
            save_all();
            return;
        }
        replies.emplace_back(reply, reply + n);
        tokens += n;
        for (size_t i = 0; i < n; i++) {
            sam.extend(reply[i]);
        }
        sam.extend(separator);
        append(replies.back());
    }

    void set_limit(size_t n) {
        limit = n;
        if (drop_over(limit)) {
            rebuild();
            save_all();
        }
    }

    void clear() {
        replies.clear();
        tokens = 0;
        sam.clear();
        clears++;
        save_all();
    }

  private:
    static constexpr uint32_t magic   = 0x58535750; // "PWSX"
    static constexpr uint32_t version = 1;

    // drops the oldest replies until at most `bound` tokens are left; whether it dropped any
    bool drop_over(size_t bound) {
        size_t drop = 0;
        while (drop < replies.size() && tokens > bound) {
            tokens -= replies[drop++].size();
        }
        replies.erase(replies.begin(), replies.begin() + static_cast<std::ptrdiff_t>(drop));
        return drop > 0;
    }

    void rebuild() {
        sam.clear();
        for (const auto & r : replies) {
            for (llama_token t : r) {
                sam.extend(t);
            }
            sam.extend(separator);
        }
    }

    void load() {
        std::ifstream in(std::filesystem::u8path(path), std::ios::binary);
        if (!in) {
            return; // none yet
        }
        uint32_t head[3] = {};
        if (!in.read(reinterpret_cast<char *>(head), sizeof head) || head[0] != magic || head[1] != version) {
            problem = "the store's file " + path + " is not a store of this version: left as it is, the store is in memory only";
            path.clear();
            return;
        }
        if (static_cast<int32_t>(head[2]) != n_vocab) {
            problem = "the store's file " + path + " was made for a vocabulary of " + std::to_string(head[2]) + " tokens, this model has " +
                      std::to_string(n_vocab) + ": left as it is, the store is in memory only";
            path.clear();
            return;
        }
        bool repaired = false;
        uint32_t n    = 0;
        while (in.read(reinterpret_cast<char *>(&n), sizeof n)) {
            std::vector<llama_token> reply(n);
            if (!in.read(reinterpret_cast<char *>(reply.data()), static_cast<std::streamsize>(n * sizeof(llama_token)))) {
                repaired = true; // torn while appending
                break;
            }
            if (n == 0 || std::any_of(reply.begin(), reply.end(), [&](llama_token t) { return t < 0 || t >= n_vocab; })) {
                repaired = true;
                continue;
            }
            tokens += n;
            replies.push_back(std::move(reply));
        }
        repaired = drop_over(limit) || repaired;
        rebuild();
        if (repaired) {
            save_all();
        }
    }

    static bool write_reply(std::ofstream & out, const std::vector<llama_token> & r) {
        const uint32_t n = static_cast<uint32_t>(r.size());
        out.write(reinterpret_cast<const char *>(&n), sizeof n);
        out.write(reinterpret_cast<const char *>(r.data()), static_cast<std::streamsize>(r.size() * sizeof(llama_token)));
        return static_cast<bool>(out);
    }

    void append(const std::vector<llama_token> & r) {
        if (path.empty()) {
            return;
        }
        if (!std::filesystem::exists(std::filesystem::u8path(path))) {
            save_all();
            return;
        }
        std::ofstream out(std::filesystem::u8path(path), std::ios::binary | std::ios::app);
        if (!out || !write_reply(out, r)) {
            problem = "could not append to the store's file " + path;
        }
    }

    void save_all() {
        if (path.empty()) {
            return;
        }
        std::error_code ec;
        const std::filesystem::path file = std::filesystem::u8path(path);
        const std::filesystem::path temp = std::filesystem::u8path(path + ".tmp");
        if (file.has_parent_path()) {
            std::filesystem::create_directories(file.parent_path(), ec);
        }
        bool ok = false;
        {
            std::ofstream out(temp, std::ios::binary | std::ios::trunc);
            const uint32_t head[3] = {magic, version, static_cast<uint32_t>(n_vocab)};
            ok                     = static_cast<bool>(out.write(reinterpret_cast<const char *>(head), sizeof head));
            for (const auto & r : replies) {
                ok = ok && write_reply(out, r);
            }
        }
        if (ok) {
            std::filesystem::rename(temp, file, ec);
            ok = !ec;
        }
        if (!ok) {
            std::filesystem::remove(temp, ec);
            problem = "could not write the store's file " + path;
        } else {
            problem.clear();
        }
    }
};

namespace {

class proposer_suffix : public proposer {
  public:
    explicit proposer_suffix(std::shared_ptr<suffix_store> store) : store_(std::move(store)) {}

    ~proposer_suffix() override { save_reply(); }

    const char * name() const override { return "suffix"; }

    void begin(const std::vector<llama_token> & history) override {
        // the previous request's reply goes to the store: `history` holds it whole, where the
        // sequence still starts as it did
        if (request_start_ >= 0 && history.size() > static_cast<size_t>(request_start_) &&
            std::equal(seq_.begin(), seq_.begin() + std::min<size_t>(seq_.size(), request_start_), history.begin())) {
            seq_.assign(history.begin(), history.end());
        }
        save_reply();
        request_start_ = -1;
        drafted_       = 0;
    }

    void propose(const std::vector<llama_token> & history, llama_token anchor, int n_max, std::vector<llama_token> & out) override {
        out.clear();
        drafted_ = 0;
        if (request_start_ < 0) {
            request_start_ = static_cast<int64_t>(history.size()); // the reply starts with the anchor
            if (store_) {
                std::lock_guard<std::mutex> hold(store_->lock);
                store_clears_ = store_->clears;
            }
        }
        continued_sequence(history, anchor, seq_);
        follow(seq_);
        if (n_max <= 0) {
            return;
        }
        const double share = row_share();

        // this request: the longest suffix that also ends earlier
        int32_t v = sam_.last();
        while (v > 0 && sam_.count(v) < 2) {
            v = sam_.link(v);
        }
        plan own;
        if (v > 0) {
            own = walk(sam_, v, sam_.len(v), n_max, share, source_request);
        }
        plan stored;
        if (store_) {
            std::lock_guard<std::mutex> hold(store_->lock);
            if (store_->sam.size() > 0) {
                const size_t n_tail        = std::min<size_t>(seq_.size(), match_window);
                const auto [state, length] = store_->sam.match(seq_.data() + seq_.size() - n_tail, n_tail);
                if (length > 0) {
                    stored = walk(store_->sam, state, length, n_max, share, source_store);
                }
            }
        }
        const bool from_store = stored.gain > own.gain;
        const plan & pick     = from_store ? stored : own;
        if (pick.tokens.empty()) {
            return;
        }
        out             = pick.tokens;
        drafted_        = static_cast<int>(out.size());
        draft_bucket_   = bucket(pick.match);
        draft_odds_     = pick.odds;
        draft_matched_  = pick.matched;
        draft_survival_ = pick.survival;
        draft_source_   = from_store ? source_store : source_request;
        proposed_at_    = llama_time_us();
    }

    void accept(int n_accepted) override {
        if (drafted_ > 0) {
            calibrate(n_accepted);
            learn_cost(1 + drafted_, static_cast<double>(llama_time_us() - proposed_at_));
        }
        drafted_ = 0;
    }

    void restore() override { drafted_ = 0; }

    // the expected accepted tokens of a draft are the sum of each prefix's survival (a draft cut
    // by a grammar or a clamp counts its verified tokens only)
    draft_evidence last_evidence(int n_proposed) const override {
        draft_evidence e;
        e.source   = draft_source_;
        e.expected = 0.0;
        for (int i = 0; i < std::min<int>(n_proposed, static_cast<int>(draft_survival_.size())); i++) {
            e.expected += draft_survival_[static_cast<size_t>(i)];
        }
        return e;
    }

  private:
    // the tail matched against the store: longer matches than this change no odds
    static constexpr size_t match_window = 64;
    // one row's share of a one-row round until this session's rounds say otherwise (a CPU's:
    // Gemma 3 270M on 2 cores, 4-6 ms a row in a 19-25 ms round)
    static constexpr double prior_share  = 0.2;
    static constexpr double prior_weight = 16.0;
    static constexpr int n_buckets       = 7;
    // where a draft came from (draft_evidence::source): each has its own calibration, since a
    // count of one in the store (a reply seen once) comes true far more often than in the request
    static constexpr int source_request   = 0;
    static constexpr int source_store     = 1;
    static constexpr int n_sources        = 2;
    static constexpr double pooled_weight = 4.0;
    // A context seen once that a shorter one has seen go two ways (a pasted text, then the same
    // words in a rewrite) is where a copy diverges: a token's odds are the lowest of its context's
    // and every shorter suffix's down to this many tokens (shorter ones branch everywhere)
    static constexpr int32_t min_context = 4;
    static constexpr int max_contexts    = 32; // suffixes looked at per token
    // A draft's first tokens come true less often than their odds, its later ones more (a draft
    // that survived its first tokens follows the text): a second fit by place in the draft, with
    // this prior in tokens, and never below a floor, so that a fit of the first place never stops
    // drafting for good (a place that drafts nothing learns nothing)
    static constexpr double place_weight = 2.0;
    static constexpr double place_floor  = 0.5;
    // prompt tokens stored before each reply
    static constexpr int64_t prompt_lead = 32;

    struct plan {
        std::vector<llama_token> tokens;
        std::vector<double> odds;     // each token's odds from its counts alone (before calibration)
        std::vector<double> matched;  // each token's odds after the source and match calibration
        std::vector<double> survival; // each token's chance that it and all before it are accepted
        int32_t match = 0;
        double gain   = 0.0; // expected rounds saved, less the rows' cost, in rounds
    };

    // matches of 1, 2, 3-4, 5-8, 9-16, 17-32 and more tokens
    static int bucket(int32_t match) {
        int b = 0;
        for (int32_t m = match - 1; m > 0 && b < n_buckets - 1; m >>= 1) {
            b++;
        }
        return b;
    }

    // From state `s` (a context of `match` tokens), the most frequent continuation token by
    // token, while the odds that all of them are accepted stay above one row's share.
    plan walk(const suffix_automaton & sam, int32_t s, int32_t match, int n_max, double share, int source) const {
        plan p;
        p.match          = match;
        const int b      = bucket(match);
        const double fit = calibration(source, b);
        double survival  = 1.0;
        for (int i = 0; i < n_max; i++) {
            const suffix_automaton::continuation c = sam.best(s);
            if (c.token < 0) {
                break;
            }
            const double odds    = branching_odds(sam, s, c);
            const double matched = odds * fit;
            survival *= std::min(0.99, matched * place_fit(i));
            if (survival < share) {
                break;
            }
            p.tokens.push_back(c.token);
            p.odds.push_back(odds);
            p.matched.push_back(matched);
            p.survival.push_back(survival);
            p.gain += survival - share;
            s = c.to;
        }
        return p;
    }

    // the odds of continuation `c` of state `s`: the lowest over `s` and its suffixes of at least
    // min_context tokens
    static double branching_odds(const suffix_automaton & sam, int32_t s, const suffix_automaton::continuation & c) {
        double odds = static_cast<double>(sam.count(c.to)) / (c.total + 0.5);
        int looked  = 0;
        for (int32_t u = sam.link(s); u > 0 && sam.len(u) >= min_context && looked < max_contexts; u = sam.link(u), looked++) {
            odds = std::min(odds, static_cast<double>(sam.followed_by(u, c.token)) / (sam.best(u).total + 0.5));
        }
        return odds;
    }

    // keeps the request's automaton over exactly `seq`: extended when `seq` continues what it
    // holds, rebuilt when the sequence was cut below it (a new prompt, a restored round)
    void follow(const std::vector<llama_token> & seq) {
        const bool continues = built_.size() <= seq.size() && std::equal(built_.begin(), built_.end(), seq.begin());
        if (!continues) {
            sam_.clear();
            built_.clear();
        }
        for (size_t i = built_.size(); i < seq.size(); i++) {
            sam_.extend(seq[i]);
        }
        built_.insert(built_.end(), seq.begin() + static_cast<std::ptrdiff_t>(built_.size()), seq.end());
    }

    // how often the counts' odds came true, by source and match length: the drafted tokens at risk (through
    // the first rejected) against the accepted
    void calibrate(int n_accepted) {
        const int at_risk = std::min(drafted_, n_accepted + 1);
        for (int i = 0; i < at_risk; i++) {
            predicted_[draft_source_][draft_bucket_] += draft_odds_[i];
            predicted_at_[bucket(i + 1)] += draft_matched_[i];
            observed_at_[bucket(i + 1)] += i < n_accepted ? 1.0 : 0.0;
        }
        observed_[draft_source_][draft_bucket_] += std::min(n_accepted, drafted_);
    }

    // how far the calibrated odds came true at the i-th place of a draft (0-based; places 1, 2,
    // 3-4, ... as the match lengths)
    double place_fit(int i) const {
        const int b = bucket(i + 1);
        return std::max(place_floor, (observed_at_[b] + place_weight) / (predicted_at_[b] + place_weight));
    }

    // how far a source's odds came true at this match length: its own record, shrunk towards
    // both sources' together by pooled_weight tokens' worth, so that a source's first drafts (the
    // store's, in a session that has drafted only from the request) start from what the session
    // has learned rather than from the raw counts
    double calibration(int source, int b) const {
        const double pooled = (observed_[0][b] + observed_[1][b] + 1.0) / (predicted_[0][b] + predicted_[1][b] + 1.0);
        return (observed_[source][b] + pooled_weight * pooled) / (predicted_[source][b] + pooled_weight);
    }

    // A round's time against its rows, least squares over this session's drafting rounds (older
    // rounds fade): time = fixed + rows × per_row. One more row pays when the odds that it is
    // accepted beat per_row / (fixed + per_row), the share of a one-row round it costs.
    void learn_cost(int rows, double us) {
        constexpr double fade = 0.98;
        n_                    = n_ * fade + 1.0;
        sr_                   = sr_ * fade + rows;
        srr_                  = srr_ * fade + static_cast<double>(rows) * rows;
        st_                   = st_ * fade + us;
        srt_                  = srt_ * fade + rows * us;
    }

    // the fitted share, shrunk towards the prior by prior_weight rounds' worth: a few noisy
    // rounds (a machine busy with something else) move it a little, a session's worth of them
    // most of the way
    double row_share() const {
        double learned = prior_share;
        if (n_ >= 2.0) {
            const double mean_r = sr_ / n_, mean_t = st_ / n_;
            const double var = srr_ / n_ - mean_r * mean_r;
            if (var >= 0.25) { // else too few draft lengths to tell a row's cost from a round's
                const double per_row = std::max(0.0, (srt_ / n_ - mean_r * mean_t) / var);
                const double fixed   = std::max(0.0, mean_t - per_row * mean_r);
                if (fixed + per_row > 0.0) {
                    learned = per_row / (fixed + per_row);
                }
            }
        }
        const double share = (n_ * learned + prior_weight * prior_share) / (n_ + prior_weight);
        return std::clamp(share, 0.01, 0.6);
    }

    // the reply, led by the end of its prompt: the same request sent again matches it from its
    // first token on
    void save_reply() {
        if (store_ && request_start_ >= 0 && seq_.size() > static_cast<size_t>(request_start_)) {
            const size_t from = static_cast<size_t>(std::max<int64_t>(0, request_start_ - prompt_lead));
            std::lock_guard<std::mutex> hold(store_->lock);
            if (store_->clears == store_clears_) {
                store_->add(seq_.data() + from, seq_.size() - from);
            }
        }
        request_start_ = -1;
    }

    std::shared_ptr<suffix_store> store_; // null: the store is off for this session
    suffix_automaton sam_;
    std::vector<llama_token> built_; // what sam_ holds
    std::vector<llama_token> seq_;   // history + anchor at the last propose (reused)
    int64_t request_start_ = -1;     // where this request's reply starts in seq_ (-1: no round yet)
    uint64_t store_clears_ = 0;      // the store's clears when this request's reply began

    int drafted_      = 0; // this round's proposals (0: another member's round, or none)
    int draft_bucket_ = 0;
    std::vector<double> draft_odds_;
    std::vector<double> draft_matched_;
    std::vector<double> draft_survival_;
    int32_t draft_source_ = -1; // the last draft's: 0 the request, 1 the store
    int64_t proposed_at_  = 0;

    double predicted_[n_sources][n_buckets] = {};
    double observed_[n_sources][n_buckets]  = {};
    double predicted_at_[n_buckets]         = {}; // by place in the draft, of the calibrated odds
    double observed_at_[n_buckets]          = {};
    double n_ = 0, sr_ = 0, srr_ = 0, st_ = 0, srt_ = 0; // faded sums of rows and times
};

} // namespace

std::shared_ptr<suffix_store> model_suffix_store(const llama_model * model, size_t limit, const std::string & path) {
    std::shared_ptr<void> held = model_attachment(model, "suffix-store", [&]() -> std::shared_ptr<void> {
        if (limit == 0) {
            return nullptr;
        }
        return std::make_shared<suffix_store>(limit, path, llama_vocab_n_tokens(llama_model_get_vocab(model)));
    });
    auto store                 = std::static_pointer_cast<suffix_store>(held);
    if (store) {
        std::lock_guard<std::mutex> hold(store->lock);
        store->set_limit(limit);
    }
    return store;
}

std::shared_ptr<suffix_store> find_suffix_store(const llama_model * model) {
    return std::static_pointer_cast<suffix_store>(model_attachment(model, "suffix-store", [] { return std::shared_ptr<void>(); }));
}

size_t suffix_store_tokens(suffix_store & store) {
    std::lock_guard<std::mutex> hold(store.lock);
    return store.tokens;
}

std::string suffix_store_problem(suffix_store & store) {
    std::lock_guard<std::mutex> hold(store.lock);
    return store.problem;
}

void suffix_store_clear(suffix_store & store) {
    std::lock_guard<std::mutex> hold(store.lock);
    store.clear();
}

std::unique_ptr<proposer> make_proposer_suffix(std::shared_ptr<suffix_store> store) {
    return std::make_unique<proposer_suffix>(std::move(store));
}

} // namespace power
