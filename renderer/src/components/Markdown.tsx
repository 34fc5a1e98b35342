import { memo, useMemo } from 'react';

import { renderMarkdown } from '../logic/markdown.js';

/** A reply's Markdown; markdown-it escapes raw HTML, so the inserted HTML holds only its own tags. */
export const Markdown = memo(function Markdown({ source }: { source: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
});
