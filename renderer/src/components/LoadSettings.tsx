// The load settings in a popover: Context size, Threads, Device (with free / total memory), GPU
// layers, Flash Attention, and the memory estimate of the load they describe; below them the
// `suffix` store of earlier replies (SuffixStoreSetting).
import { useShallow } from 'zustand/react/shallow';

import { deviceOptions, type DeviceChoice } from '../logic/devices.js';
import { bytes } from '../logic/format.js';
import { checkLoadFields, LOAD_FIELD_LABELS, type LoadFields } from '../logic/load-settings.js';
import type { FlashAttnChoice, MemoryEstimate } from '../api-types.js';
import { PickerOptions } from './PickerOptions.js';
import { Popover } from './Popover.js';
import { usePower } from './store-context.js';
import { SuffixStoreSetting } from './SuffixStoreSetting.js';

function TextSetting({
  id,
  label,
  value,
  placeholder,
  error,
  onChange,
  text = false,
}: {
  id: string;
  label: string;
  value: string;
  placeholder: string;
  error: string | undefined;
  onChange: (text: string) => void;
  text?: boolean;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        inputMode={text ? 'text' : 'numeric'}
        value={value}
        placeholder={placeholder}
        aria-invalid={error !== undefined}
        title={error}
        onChange={(e) => onChange(e.target.value)}
      />
    </div>
  );
}

/** The settings typed as text; GPU layers, with a hint instead of a placeholder, stands on its own. */
const TEXT_SETTINGS: { field: Exclude<keyof LoadFields, 'gpuLayers'>; id: string; placeholder: string; text?: boolean }[] = [
  { field: 'contextSize', id: 'context-size', placeholder: "model's, ≤ 4096" },
  { field: 'threads', id: 'threads', placeholder: 'physical cores' },
  { field: 'remote', id: 'remote-machines', placeholder: 'host:port of power rpc, …', text: true },
];

function EstimateLine({ estimate, error }: { estimate: MemoryEstimate | null; error: string | null }) {
  if (error) return <p className="hint estimate">estimate: {error}</p>;
  if (!estimate) return null;
  const parts = [`weights ${bytes(estimate.weights)}`, `KV ${bytes(estimate.kv)}`];
  if (estimate.draft > 0) parts.push(`draft ${bytes(estimate.draft)}`);
  if (estimate.projector > 0) parts.push(`projector ${bytes(estimate.projector)}`);
  if (estimate.recurrent > 0) parts.push(`snapshots ${bytes(estimate.recurrent)}`);
  return (
    <p className="hint estimate" title={estimate.description}>
      this load needs about {bytes(estimate.total)} ({parts.join(', ')}) at ctx {estimate.contextSize}
    </p>
  );
}

export function LoadSettings() {
  const s = usePower(
    useShallow((st) => ({
      contextSize: st.contextSize,
      threads: st.threads,
      remote: st.remote,
      gpuLayers: st.gpuLayers,
      device: st.device,
      flashAttn: st.flashAttn,
      devices: st.devices,
      estimate: st.estimate,
      estimateError: st.estimateError,
      setLoadField: st.setLoadField,
      setDevice: st.setDevice,
      setFlashAttn: st.setFlashAttn,
    })),
  );
  const check = checkLoadFields(s);
  const errors = check.ok ? {} : check.errors;
  const devices = deviceOptions(s.devices);
  return (
    <Popover summary="Load settings" className="load-settings">
      <div className="settings-grid">
        {TEXT_SETTINGS.map(({ field, id, placeholder, text }) => (
          <TextSetting
            key={field}
            id={id}
            label={LOAD_FIELD_LABELS[field]}
            value={s[field]}
            placeholder={placeholder}
            error={errors[field]}
            onChange={(t) => s.setLoadField(field, t)}
            text={text}
          />
        ))}
        <div className="field span2">
          <label htmlFor="device">Device</label>
          <select id="device" value={s.device} onChange={(e) => s.setDevice(e.target.value as DeviceChoice)}>
            <PickerOptions options={devices} />
          </select>
        </div>
        <div className="field">
          <label htmlFor="gpu-layers">{LOAD_FIELD_LABELS.gpuLayers}</label>
          <input
            id="gpu-layers"
            inputMode="numeric"
            value={s.gpuLayers}
            aria-invalid={errors.gpuLayers !== undefined}
            onChange={(e) => s.setLoadField('gpuLayers', e.target.value)}
            title="-1: all layers (ignored on the CPU)"
          />
        </div>
        <div className="field">
          <label htmlFor="flash-attn">Flash Attention</label>
          <select
            id="flash-attn"
            value={s.flashAttn}
            onChange={(e) => s.setFlashAttn(e.target.value as FlashAttnChoice)}
            title="Default: on with CUDA; on the CPU (exact either way there) on for models with heads of 128 or more and sliding windows, such as Gemma, where it is faster, else off"
          >
            <option value="auto">default</option>
            <option value="on">on</option>
            <option value="off">off</option>
          </select>
        </div>
      </div>
      {!check.ok && (
        <p className="form-errors" role="alert">
          {Object.values(errors).join(' ')}
        </p>
      )}
      <EstimateLine estimate={s.estimate} error={check.ok ? s.estimateError : null} />
      <SuffixStoreSetting />
    </Popover>
  );
}
