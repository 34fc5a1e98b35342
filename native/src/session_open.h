#pragma once
// Opening a session without N-API: what Session.create (session.cpp) and the native checker
// (native/tools/) both run. Checks first, on the caller's thread, then the context and the
// proposer, on whatever thread may block.

#include <string>
#include <vector>

#include "session_core.h"

namespace power {

// A session's strategy is one name or an ordered list ("ngram,mtp": a chain, proposer_chain.cpp):
// its members in order, whether one of them drafts from the draft file, whether `member` is one
std::vector<std::string> strategy_members(const std::string & strategy);
bool strategy_needs_draft(const std::string & strategy);
bool strategy_has_member(const std::string & strategy, const std::string & member);
// whether `member` of `strategy` gets the session's draft file (draft-model, llama.cpp's drafts, and
// mtp's Gemma 4 assistant or sidecar where no other member needs the file)
bool member_takes_draft(const std::string & strategy, const std::string & member);

// Validates the strategy against the models and fixes `core.spec` from `core.params`. Returns
// "" when the session can be opened, else why not. `draft` may be null; `mtp_loaded`: the
// model whose NextN/MTP layers draft for `mtp` (the target, or the sidecar given as the draft)
// was loaded with them.
std::string check_session(session_core & core, const model_ref & draft, bool draft_given, bool mtp_loaded);

// Creates the context, its thread pool, the batch and the proposer. Returns "" on success, else
// the reason (with what llama.cpp logged while it failed); a failed core is not to be used.
std::string open_session(session_core & core, const model_ref & draft);

} // namespace power
