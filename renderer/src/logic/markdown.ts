// Assistant replies are Markdown written by a model: untrusted. markdown-it with `html: false`
// escapes every raw HTML tag (it reaches the page as text, never as an element) and its link
// check refuses javascript:, vbscript:, file: and non-image data: URLs.
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });

// links open outside the app and tell the target nothing about us
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('target', '_blank');
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** HTML for a reply's Markdown, safe to insert: no raw HTML from the source survives. */
export function renderMarkdown(source: string): string {
  return md.render(source);
}
