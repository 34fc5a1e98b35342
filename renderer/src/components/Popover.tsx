// A details element whose content floats over the page (so opening it never changes the
// header's height). An outside click or Escape closes it (App wires both for every popover).
import type { ReactNode } from 'react';

export function Popover({
  summary,
  label,
  className,
  open,
  onToggle,
  align = 'start',
  children,
}: {
  summary: ReactNode;
  /** the summary's accessible name when its text is an icon */
  label?: string;
  className?: string;
  /** controlled when given */
  open?: boolean;
  onToggle?: (open: boolean) => void;
  align?: 'start' | 'end' | 'up';
  children: ReactNode;
}) {
  return (
    <details
      className={`popover ${className ?? ''}`}
      data-align={align}
      {...(open === undefined ? {} : { open })}
      onToggle={(e) => onToggle?.((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary aria-label={label}>{summary}</summary>
      <div className="popover-body">{children}</div>
    </details>
  );
}

/** An ⓘ that opens a short explanation: hints live here, never in the header's flow. */
export function InfoTip({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Popover summary="i" label={label} className="info">
      {children}
    </Popover>
  );
}
