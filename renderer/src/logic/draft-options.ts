// What the Draft method and Draft model pickers offer for a target: only what the target can
// serve (mtp when it has NextN layers, or with a Gemma 4 assistant from the library when it has
// none; the draft strategies for which the library holds a candidate, ngram, none); an option
// that cannot be used is listed disabled with the reason.
import { DRAFT_STRATEGIES, ENGINE_STRATEGIES, STRATEGIES, type Strategy } from '../../../app/contract/strategies.js';
import type { Draft, Strategies } from '../api-types.js';

export interface PickerOption {
  value: string;
  label: string;
  disabled: boolean;
  /** why it is disabled */
  reason?: string;
}

/** mtp needs a draft (a Gemma 4 assistant) where the target has no NextN layers of its own */
export function needsDraft(strategy: Strategy, table: Strategies | null): boolean {
  return DRAFT_STRATEGIES.has(strategy) || (strategy === 'mtp' && table?.mtp.available === false);
}

/** The Draft method options for a target, from models.strategies and models.drafts. */
export function draftMethodOptions(table: Strategies | null, drafts: readonly Draft[]): PickerOption[] {
  const options: PickerOption[] = [];
  for (const strategy of STRATEGIES) {
    if (needsDraft(strategy, table)) {
      const candidates = drafts.filter((d) => d.strategy === strategy);
      if (candidates.length === 0) continue;
      // a target without NextN layers is offered mtp only with an assistant or sidecar that fits
      // it: one made for another model is no option of this one
      if (strategy === 'mtp' && !candidates.some((d) => d.compatible)) continue;
      if (!ENGINE_STRATEGIES.has(strategy)) {
        options.push({
          value: strategy,
          label: strategy,
          disabled: true,
          reason: `this engine build does not run the '${strategy}' proposer yet`,
        });
      } else if (!candidates.some((d) => d.compatible)) {
        options.push({
          value: strategy,
          label: strategy,
          disabled: true,
          reason: `no compatible draft in the library (${candidates[0]!.reason ?? 'incompatible'})`,
        });
      } else {
        options.push({ value: strategy, label: strategy, disabled: false });
      }
      continue;
    }
    const availability = table?.[strategy];
    if (strategy === 'mtp') {
      // only targets with NextN layers can serve it: otherwise it is not offered at all
      if (availability?.available) options.push({ value: strategy, label: strategy, disabled: false });
      continue;
    }
    if (!availability) options.push({ value: strategy, label: strategy, disabled: false });
    else
      options.push({
        value: strategy,
        label: strategy,
        disabled: !availability.available,
        ...(availability.reason ? { reason: availability.reason } : {}),
      });
  }
  return options;
}

/** The Draft model options for a method: every candidate of that strategy, incompatible ones disabled. */
export function draftFileOptions(strategy: Strategy, drafts: readonly Draft[], table: Strategies | null): PickerOption[] {
  if (!needsDraft(strategy, table)) return [];
  return drafts
    .filter((d) => d.strategy === strategy)
    .map((d) =>
      d.compatible
        ? { value: d.modelId, label: d.name, disabled: false }
        : { value: d.modelId, label: `${d.name} (${d.reason ?? 'incompatible'})`, disabled: true, reason: d.reason ?? 'incompatible' },
    );
}

/** The method to show after the options change: keep the current one when it is still usable. */
export function settleChoice(current: string | null, options: readonly PickerOption[]): string | null {
  if (current && options.some((o) => o.value === current && !o.disabled)) return current;
  return options.find((o) => !o.disabled)?.value ?? null;
}
