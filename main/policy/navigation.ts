// Navigation and new windows: the window shows the app and nothing else. Every navigation is
// denied and every new window is refused; a link to an http(s) page that the user clicked opens
// in the system browser instead. Nothing else (file:, javascript:, custom schemes) ever leaves.

/** The URL to hand to the system browser, or null when it must not leave the app at all. */
export function externalUrl(url: string): string | null {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    if (parsed.username !== '' || parsed.password !== '') return null;
    return parsed.toString();
  } catch {
    return null;
  }
}

export interface NavigationDecision {
  /** always false: the window never leaves the app */
  allow: false;
  /** opened in the system browser, when it is an http(s) link the user followed */
  openExternally: string | null;
}

/**
 * `will-navigate` / `will-frame-navigate`: the page tried to go to `url`. Our page never
 * navigates itself (one-page app), so a main-frame navigation to an http(s) URL is the user
 * clicking a plain link, which goes to the browser; anything from a subframe goes nowhere.
 */
export function navigationDecision(url: string, isMainFrame: boolean): NavigationDecision {
  return { allow: false, openExternally: isMainFrame ? externalUrl(url) : null };
}

/** Dispositions Chromium gives a click on a link (target=_blank, middle or ctrl click). */
const LINK_CLICK_DISPOSITIONS = new Set(['foreground-tab', 'background-tab']);

/**
 * setWindowOpenHandler: no new window ever; an http(s) link clicked with target=_blank (or a
 * middle/ctrl click) opens in the system browser. `window.open()` calls with window features
 * ('new-window') and anything that is not a link click stay refused.
 */
export function windowOpenDecision(details: { url: string; disposition: string }): { action: 'deny'; openExternally: string | null } {
  return {
    action: 'deny',
    openExternally: LINK_CLICK_DISPOSITIONS.has(details.disposition) ? externalUrl(details.url) : null,
  };
}

/** <webview> is never attached: the app has none, and a page that adds one gets nothing. */
export function webviewAllowed(): false {
  return false;
}
