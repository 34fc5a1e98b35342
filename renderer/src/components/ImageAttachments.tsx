// The images a message is written with, in the composer and in a message's edit form alike:
// each file is checked and kept in the service at once (the store's attachImage), shown as a
// thumbnail with its remove button; the attach button says why when the loaded model reads no
// images. An image the message already had is read back from the service by its thumbnail.
import { useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import type { ChatImage } from '../api-types.js';
import { imageBlocker } from '../logic/images.js';
import { ImageThumb, rememberImageUrl } from './ImageThumb.js';
import { usePower } from './store-context.js';

/** An image of the message being written: `src` is the page's own copy of one attached here. */
export interface PendingImage {
  image: ChatImage;
  src?: string;
}

export interface ImageAttachments {
  images: PendingImage[];
  setImages: (images: PendingImage[]) => void;
  attach: (files: readonly File[]) => Promise<void>;
  remove: (index: number) => void;
  /** why images cannot be attached now (the loaded model reads none), else null */
  blocked: string | null;
}

export function useImageAttachments(initial: readonly ChatImage[] = []): ImageAttachments {
  const { attachImage, fail, blocked } = usePower(
    useShallow((s) => ({ attachImage: s.attachImage, fail: s.fail, blocked: imageBlocker(s.engine, s.models) })),
  );
  const [images, setImages] = useState<PendingImage[]>(() => initial.map((image) => ({ image })));
  // the count as the attachments land, which each attach reads before the state re-renders
  const count = useRef(0);
  count.current = images.length;

  const attach = async (files: readonly File[]): Promise<void> => {
    if (blocked) {
      fail('Attaching an image', { code: 'unsupported', message: blocked });
      return;
    }
    for (const file of files) {
      const attached = await attachImage(file, count.current);
      if (!attached) return;
      // the page holds the image already: its message's thumbnail need not read it back
      rememberImageUrl(attached.image.sha256, attached.src);
      count.current++;
      setImages((now) => [...now, attached]);
    }
  };
  const remove = (index: number): void => setImages((now) => now.filter((_, i) => i !== index));
  return { images, setImages, attach, remove, blocked };
}

/** The attach button and its hidden file input. */
export function AttachButton({ attachments }: { attachments: ImageAttachments }) {
  const fileInput = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        className="attach"
        disabled={attachments.blocked !== null}
        title={attachments.blocked ?? 'Attach images (PNG, JPEG, GIF, BMP, PPM); paste or drop them here too'}
        onClick={() => fileInput.current?.click()}
      >
        Attach image
      </button>
      <input
        ref={fileInput}
        type="file"
        accept="image/png,image/jpeg,image/gif,image/bmp,image/x-portable-pixmap,image/x-portable-graymap,.ppm,.pgm,.pnm"
        multiple
        hidden
        aria-label="Image files"
        onChange={(e) => {
          const files = Array.from(e.target.files ?? []);
          e.target.value = '';
          void attachments.attach(files);
        }}
      />
    </>
  );
}

/** The thumbnails of the images attached so far, each with its remove button. */
export function PendingImages({ attachments, label }: { attachments: ImageAttachments; label: string }) {
  if (attachments.images.length === 0) return null;
  return (
    <div className="pending-images" aria-label={label}>
      {attachments.images.map(({ image, src }, i) => (
        <ImageThumb key={`${image.sha256}-${i}`} image={image} src={src} onRemove={() => attachments.remove(i)} />
      ))}
    </div>
  );
}

/** Every file a drop or a paste carries: one that is no image is refused with the reason, not dropped in silence. */
export function filesOf(list: DataTransfer | null): File[] {
  return Array.from(list?.files ?? []);
}
