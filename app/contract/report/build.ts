// Assembles a report from what a run (or a chat) produced and checks it against the schema.
import { compareWithControl, summarizeProfiles } from './aggregate.js';
import { REPORT_SCHEMA_VERSION, Report, type ChatSection, type Environment, type RequestRecord, type RunInfo } from './schema.js';

/** A bench report; with `chat`, the chat report of the same schema (kind 'power-chat-report'). */
export function buildReport(
  run: RunInfo,
  environment: Environment,
  requests: readonly Omit<RequestRecord, 'matchesControl'>[],
  chat?: ChatSection,
): Report {
  const compared = compareWithControl(requests);
  return Report.parse({
    schemaVersion: REPORT_SCHEMA_VERSION,
    kind: chat ? 'power-chat-report' : 'power-bench-report',
    run,
    environment,
    profiles: summarizeProfiles(run.profiles, compared),
    requests: compared,
    ...(chat ? { chat } : {}),
  });
}
