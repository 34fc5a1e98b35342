// The <option>s of a picker (Draft method, Draft model, Device): one that cannot be used is
// shown disabled, and hovering it tells why.
import type { PickerOption } from '../logic/draft-options.js';

export function PickerOptions({ options }: { options: readonly PickerOption[] }) {
  return options.map((o) => (
    <option key={o.value} value={o.value} disabled={o.disabled} title={o.reason}>
      {o.label}
    </option>
  ));
}
