// How much of a GGUF header Power is willing to believe. A crafted file can be well-formed and
// still absurd: a metadata array of 2^30 numbers in a sparse file (the reader would run out of
// memory), a million tensors or keys (llama.cpp's loader is quadratic in them: 100k tensors
// take 37 s, 1M never finish), or tensors spaced gigabytes apart by a huge alignment (the file
// is mostly holes, and loading it eats memory until the process is killed). Real models are
// far inside every limit here: a few thousand tensors, a few hundred keys, vocabularies and
// merge lists of at most a few hundred thousand entries, alignment 32.

export const GGUF_LIMITS = {
  /** tensors in one file (real checkpoints: hundreds to a few thousand; unmerged MoE experts ~13k) */
  maxTensors: 32_768,
  /** metadata entries (real files: tens to a few hundred) */
  maxMetadataEntries: 16_384,
  /** items in one metadata array (vocabularies, merges, per-layer values) */
  maxArrayItems: 1 << 21,
  /** bytes in one metadata string (chat templates are tens of KB) */
  maxStringBytes: 64 << 20,
  /** bytes of metadata read into memory altogether (strings and array items as stored) */
  maxMetadataBytes: 256 << 20,
  /** general.alignment */
  maxAlignment: 1 << 16,
  /** padding between tensors may exceed the tensors' own bytes only up to this much */
  maxPaddingBytes: 64 << 20,
} as const;

export type GgufLimits = typeof GGUF_LIMITS;
