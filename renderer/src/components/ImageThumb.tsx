// An image of a message as a thumbnail (its bytes read once from the service, by sha256, and
// kept for the page's life); a click shows it larger, Escape or a click closes it. A format the
// browser does not show (PPM) is a tile with its name.
import { useEffect, useState } from 'react';

import type { ChatImage, PowerApi } from '../api-types.js';
import { browserShows } from '../logic/images.js';
import { usePower } from './store-context.js';

const urls = new Map<string, Promise<string>>();

function imageUrl(api: PowerApi, sha256: string): Promise<string> {
  let url = urls.get(sha256);
  if (!url) {
    url = api.chats.image({ sha256 }).then((i) => `data:${i.type};base64,${i.data}`);
    // a failed read is asked again by the next thumbnail
    url.catch(() => urls.delete(sha256));
    urls.set(sha256, url);
  }
  return url;
}

/** Keeps the address of an image the page already holds (one just attached), so that its message does not read it again. */
export function rememberImageUrl(sha256: string, url: string): void {
  if (!urls.has(sha256)) urls.set(sha256, Promise.resolve(url));
}

/** The image's address: given (a pending image's own), else read from the service. */
function useImageUrl(image: ChatImage, given?: string): string | null {
  const api = usePower((s) => s.api);
  const [url, setUrl] = useState<string | null>(given ?? null);
  useEffect(() => {
    if (given || !api || !browserShows(image.type)) return;
    let live = true;
    imageUrl(api, image.sha256).then(
      (u) => live && setUrl(u),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [api, image.sha256, image.type, given]);
  return given ?? url;
}

function label(image: ChatImage): string {
  return image.name ?? `${image.type.replace('image/', '').toUpperCase()} image`;
}

export function ImageThumb({ image, src, onRemove }: { image: ChatImage; src?: string; onRemove?: () => void }) {
  const url = useImageUrl(image, src);
  const [open, setOpen] = useState(false);
  const shows = browserShows(image.type);
  useEffect(() => {
    if (!open) return;
    const close = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') setOpen(false);
    };
    window.addEventListener('keydown', close);
    return () => window.removeEventListener('keydown', close);
  }, [open]);
  return (
    <figure className="image-thumb" data-sha256={image.sha256}>
      {shows && url ? (
        <button
          type="button"
          className="thumb"
          aria-label={`${label(image)}: show larger`}
          title={`${label(image)}: show larger`}
          onClick={() => setOpen(true)}
        >
          <img src={url} alt={label(image)} />
        </button>
      ) : (
        <span className="thumb tile" role="img" aria-label={label(image)} title={label(image)}>
          {shows ? '…' : 'PPM'}
        </span>
      )}
      {onRemove && (
        <button type="button" className="remove small" aria-label={`Remove ${label(image)}`} title="remove" onClick={onRemove}>
          ×
        </button>
      )}
      {open && url && (
        <div className="image-view" role="dialog" aria-label={label(image)} onClick={() => setOpen(false)}>
          <img src={url} alt={label(image)} />
        </div>
      )}
    </figure>
  );
}
