import { THEME_CHOICES, type ThemeChoice } from '../logic/theme.js';
import { usePower } from './store-context.js';

/** Light, dark, or the system's (prefers-color-scheme). */
export function ThemePicker() {
  const theme = usePower((s) => s.theme);
  const setTheme = usePower((s) => s.setTheme);
  return (
    <div className="field inline theme-picker">
      <label htmlFor="theme">Theme</label>
      <select id="theme" value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
        {THEME_CHOICES.map((t) => (
          <option key={t.value} value={t.value}>
            {t.label}
          </option>
        ))}
      </select>
    </div>
  );
}
