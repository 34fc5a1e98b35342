// Downloads in the Models dialog: the recommended pairs and each download's progress in words.
import type { DownloadEntry, RecommendedPair } from '../api-types.js';
import { bytes } from './format.js';

/** 0…100, or null when the size is not known yet. */
export function downloadPercent(d: Pick<DownloadEntry, 'receivedBytes' | 'totalBytes'>): number | null {
  if (!d.totalBytes) return null;
  return Math.min(100, Math.floor((d.receivedBytes / d.totalBytes) * 100));
}

/** "1.2 MiB of 4.7 MiB", "downloaded", "failed: network: …", "cancelled" */
export function downloadLine(d: DownloadEntry): string {
  switch (d.state) {
    case 'running':
      return d.totalBytes ? `${bytes(d.receivedBytes)} of ${bytes(d.totalBytes)}` : `${bytes(d.receivedBytes)} so far`;
    case 'done':
      return d.modelId ? 'downloaded and added to the library' : 'downloaded';
    case 'cancelled':
      return 'cancelled (the partial file was removed)';
    case 'failed':
      return `failed: ${d.error?.message ?? 'no reason given'}${d.error?.resumable ? ' (Download again resumes it)' : ''}`;
  }
}

/** The files of a pair, target first. */
export function pairFiles(pair: RecommendedPair): RecommendedPair['target'][] {
  return pair.draft ? [pair.target, pair.draft] : [pair.target];
}

/** "2.7 GB" (approximate: publishers re-upload) */
export function approxSize(pair: RecommendedPair): string {
  const total = pairFiles(pair).reduce((n, f) => n + f.approxBytes, 0);
  return `about ${(total / 1e9).toFixed(1)} GB`;
}

/** The latest download of each file name. */
export function latestByFile(downloads: readonly DownloadEntry[]): Map<string, DownloadEntry> {
  const out = new Map<string, DownloadEntry>();
  for (const d of downloads) {
    const known = out.get(d.fileName);
    if (!known || known.startedAt <= d.startedAt) out.set(d.fileName, d);
  }
  return out;
}
