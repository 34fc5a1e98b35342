// The OpenAI layer's backend: the service's library and its stateless completions.
import type { PowerService } from '../../service/types.js';
import type { CompletionBackend } from './backend.js';

export function serviceCompletions(service: PowerService): CompletionBackend {
  return {
    models: async () =>
      (await service.models.list({})).entries.map((e) => ({
        name: e.name,
        created: Math.floor(Date.parse(e.addedAt) / 1000) || 0,
        problem: e.problem,
      })),
    complete: (input, onText, signal) => service.completions.complete(input, onText, signal),
    metrics: () => service.metrics.prometheus(),
  };
}
