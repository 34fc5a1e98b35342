// Assembles a report from what a run produced and checks it against the schema.
import { compareWithControl, summarizeProfiles } from './aggregate.js';
import { REPORT_SCHEMA_VERSION, Report, type Environment, type RequestRecord, type RunInfo } from './schema.js';

export function buildReport(run: RunInfo, environment: Environment, requests: readonly Omit<RequestRecord, 'matchesControl'>[]): Report {
  const compared = compareWithControl(requests);
  return Report.parse({
    schemaVersion: REPORT_SCHEMA_VERSION,
    kind: 'power-bench-report',
    run,
    environment,
    profiles: summarizeProfiles(run.profiles, compared),
    requests: compared,
  });
}
