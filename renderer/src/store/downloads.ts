// Downloads: the recommended pairs, and the files being fetched into the library folder (their
// progress comes as downloads.onChanged events; a finished one joins the library by itself).
import type { DownloadsSlice, Slice } from './types.js';

function message(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}

export const createDownloadsSlice: Slice<DownloadsSlice> = (set, get) => ({
  recommended: [],
  downloads: [],
  downloadError: null,

  async refreshDownloads() {
    const { api } = get();
    if (!api) return;
    try {
      const [{ pairs }, { downloads }] = await Promise.all([api.downloads.recommended({}), api.downloads.list({})]);
      set({ recommended: pairs, downloads });
    } catch (error) {
      set({ downloadError: `Reading the downloads failed: ${message(error)}` });
    }
  },

  async startDownload(files) {
    const { api } = get();
    if (!api) return;
    set({ downloadError: null });
    for (const f of files) {
      try {
        const entry = await api.downloads.start({
          url: f.url,
          ...(f.fileName ? { fileName: f.fileName } : {}),
          ...(f.sha256 ? { sha256: f.sha256 } : {}),
          ...(f.sizeBytes ? { sizeBytes: f.sizeBytes } : {}),
        });
        get().setDownload(entry);
      } catch (error) {
        set({ downloadError: `Download of ${f.fileName ?? f.url} failed: ${message(error)}` });
        return;
      }
    }
  },

  async cancelDownload(id) {
    const { api } = get();
    if (!api) return;
    try {
      get().setDownload(await api.downloads.cancel({ downloadId: id }));
    } catch (error) {
      set({ downloadError: `Cancelling the download failed: ${message(error)}` });
    }
  },

  setDownload(entry) {
    const list = get().downloads;
    const i = list.findIndex((d) => d.id === entry.id);
    set({ downloads: i < 0 ? [...list, entry] : list.map((d) => (d.id === entry.id ? entry : d)) });
  },
});
