// Where the app's own pages live: the privileged app:// scheme (standard and secure, so the
// page gets a real origin, 'self' in the CSP means app://power, and fetch works), never file://.
export const APP_SCHEME = 'app';
export const APP_HOST = 'power';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/** Whether `url` is one of the app's own pages (same scheme and host; anything unparsable is not). */
export function isAppUrl(url: string | null | undefined): boolean {
  if (!url) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}
