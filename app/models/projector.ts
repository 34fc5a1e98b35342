// Multimodal projectors: the `mmproj-*.gguf` files (general.architecture "clip") that llama.cpp's
// mtmd library loads beside a text model to turn an image (or audio) into input embeddings. Read
// from the header alone, as clip.cpp reads it: the projector type, the encoders it has, the image
// size and patch size, the tokens an image costs and the width of the embeddings it writes. A
// projector is no chat model; it pairs with a model whose input embeddings have its output width
// (mtmd refuses any other: "mismatch between text model and mmproj").
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import type { ProjectorPairing } from '../contract/api/models.js';
import { readGgufInfo } from '../gguf/reader.js';
import type { GgufInfo, GgufValue } from '../gguf/types.js';

export type { ProjectorPairing };

/** What a projector file declares, before it is checked against a model. */
export type ProjectorFacts = Omit<ProjectorPairing, 'compatible' | 'reason'>;

/** The general.architecture of every projector file. */
export const PROJECTOR_ARCHITECTURE = 'clip';

function value(info: GgufInfo, key: string): GgufValue | undefined {
  return info.metadata.get(key);
}

function num(info: GgufInfo, key: string): number | undefined {
  const v = value(info, key);
  if (!v || v.type === 'array' || v.type === 'string' || v.type === 'bool') return undefined;
  return Number(v.value);
}

function flag(info: GgufInfo, key: string): boolean {
  const v = value(info, key);
  return v?.type === 'bool' && v.value;
}

function text(info: GgufInfo, key: string): string | undefined {
  const v = value(info, key);
  return v?.type === 'string' ? v.value : undefined;
}

export function isProjector(info: GgufInfo): boolean {
  return text(info, 'general.architecture') === PROJECTOR_ARCHITECTURE;
}

/**
 * The header of a regular file, or null when it is none or unreadable: a FIFO or a device would
 * block the reader for ever, and the checks that name what is wrong come later (check-file.ts).
 */
export async function readRegularHeader(path: string): Promise<GgufInfo | null> {
  try {
    if (!(await stat(path)).isFile()) return null;
    return await readGgufInfo(path);
  } catch {
    return null;
  }
}

/**
 * Where clip_n_mmproj_embd reads the output width, per projector type: a tensor and the dimension
 * (ggml order, ne0 first). Types not listed fall back to clip.vision.projection_dim, which the
 * converters write as the text model's width.
 */
const WIDTH_TENSOR: Record<string, [string, 0 | 1]> = {
  gemma3: ['mm.input_projection.weight', 0],
  gemma3nv: ['mm.input_projection.weight', 0],
  gemma4v: ['mm.input_projection.weight', 1],
  gemma4uv: ['mm.input_projection.weight', 1],
  mlp: ['mm.2.weight', 1],
  phi4: ['mm.2.weight', 1],
  pixtral: ['mm.2.weight', 1],
  lightonocr: ['mm.2.weight', 1],
  lfm2: ['mm.2.weight', 1],
  kimivl: ['mm.2.weight', 1],
  ldp: ['mm.model.mb_block.1.block.2.1.bias', 0],
  ldpv2: ['mm.model.peg.0.bias', 0],
  resampler: ['resampler.proj.weight', 0],
  adapter: ['mm.model.mlp.3.weight', 1],
  qwen2vl_merger: ['mm.1.bias', 0],
  'qwen2.5vl_merger': ['mm.1.bias', 0],
  janus_pro: ['mm.1.bias', 0],
  idefics3: ['mm.model.fc.weight', 1],
  internvl: ['mm.3.weight', 1],
};

function tensorDim(info: GgufInfo, name: string, dim: 0 | 1): number | undefined {
  return info.tensors.find((t) => t.name === name)?.shape[dim];
}

function outputWidth(info: GgufInfo, type: string): number | null {
  // clip.cpp turns an mlp projector with a mm.3 layer into mlp_norm, whose width is mm.3.bias
  if (type === 'mlp' && info.tensors.some((t) => t.name === 'mm.3.weight')) return tensorDim(info, 'mm.3.bias', 0) ?? null;
  const at = WIDTH_TENSOR[type];
  const width = at ? tensorDim(info, ...at) : num(info, 'clip.vision.projection_dim');
  return width ?? null;
}

/**
 * Tokens one image costs, as clip_n_output_tokens counts them for projectors whose preprocessor
 * resizes every image to image_size x image_size (mtmd's fixed-size preprocessor); null for the
 * others, whose cost depends on the image's size (tiles, dynamic resolution).
 */
function tokensPerImage(info: GgufInfo, type: string, imageSize: number, patchSize: number): number | null {
  const side = Math.floor(imageSize / patchSize);
  const patches = side * side;
  switch (type) {
    case 'mlp':
      // with image_grid_pinpoints an image is cut into tiles (llava-uhd): its cost varies
      return value(info, 'clip.vision.image_grid_pinpoints') ? null : patches;
    case 'ldp':
    case 'ldpv2':
      return Math.floor(patches / 4);
    case 'adapter':
      // glm-edge: begin- and end-of-image embeddings of its own
      return Math.floor(patches / 4) + (info.tensors.some((t) => t.name === 'adapter.boi') ? 2 : 0);
    case 'gemma3': {
      // both sides pooled by n_merge (4 unless clip.vision.projector.scale_factor says otherwise)
      const merge = num(info, 'clip.vision.projector.scale_factor') ?? 4;
      return Math.floor(patches / (merge * merge));
    }
    default:
      return null;
  }
}

/** A projector's facts from its header; a string is why the file is not a usable projector. */
export function projectorFacts(info: GgufInfo): ProjectorFacts | string {
  if (!isProjector(info))
    return `not a multimodal projector (general.architecture is '${text(info, 'general.architecture') ?? 'missing'}', expected 'clip')`;
  const image = flag(info, 'clip.has_vision_encoder');
  const audio = flag(info, 'clip.has_audio_encoder');
  if (!image && !audio)
    return 'the projector declares neither a vision nor an audio encoder (clip.has_vision_encoder, clip.has_audio_encoder)';
  // mixed-modality files name the vision projector under clip.vision.projector_type
  const type =
    text(info, 'clip.projector_type') ?? (image ? text(info, 'clip.vision.projector_type') : text(info, 'clip.audio.projector_type'));
  if (!type) return 'the projector declares no clip.projector_type';
  const imageSize = image ? (num(info, 'clip.vision.image_size') ?? null) : null;
  const patchSize = image ? (num(info, 'clip.vision.patch_size') ?? null) : null;
  if (image && (imageSize === null || patchSize === null || patchSize <= 0 || imageSize < 0)) {
    return 'the vision encoder lacks a usable clip.vision.image_size or clip.vision.patch_size';
  }
  return {
    path: info.path,
    projectorType: type,
    accepts: { image, audio },
    imageSize,
    patchSize,
    tokensPerImage: image && imageSize !== null && patchSize !== null ? tokensPerImage(info, type, imageSize, patchSize) : null,
    outputWidth: outputWidth(info, type),
    weightsBytes: info.tensors.reduce((a, t) => a + t.byteSize, 0),
  };
}

/** The width of a model's input embeddings, which a projector must write. */
function modelWidth(model: GgufInfo): number | undefined {
  const arch = text(model, 'general.architecture');
  return arch ? num(model, `${arch}.embedding_length`) : undefined;
}

/** A projector checked against a model: compatible, or refused with the reason. */
export function pairProjector(model: GgufInfo, facts: ProjectorFacts): ProjectorPairing {
  const width = modelWidth(model);
  const no = (reason: string): ProjectorPairing => ({ ...facts, compatible: false, reason });
  if (width === undefined) return no("the model's header lacks its embedding length");
  if (facts.outputWidth === null) return no(`cannot tell the output width of a '${facts.projectorType}' projector`);
  if (facts.outputWidth !== width) return no(`projector outputs ${facts.outputWidth}-wide embeddings; this model's are ${width}`);
  return { ...facts, compatible: true };
}

const PROJECTOR_FILE = /^mmproj.*\.gguf$/i;
const stem = (file: string) => basename(file).replace(/\.gguf$/i, '');

/**
 * The projector beside a model file (same folder): `mmproj-X.gguf` for `X.gguf` first, whether
 * it fits or not (the reason says why not); else, among the projectors not named for another
 * model in the folder, the first by name whose width is the model's (or, when none is, the
 * first, refused with the reason). null when the folder has no projector for it.
 */
export async function projectorFor(modelPath: string, model: GgufInfo): Promise<ProjectorPairing | null> {
  const dir = dirname(modelPath);
  let files: string[];
  try {
    files = (await readdir(dir)).sort();
  } catch {
    return null;
  }
  const lower = new Set(files.map((f) => f.toLowerCase()));
  const own = `mmproj-${stem(modelPath)}.gguf`.toLowerCase();
  const named = files.filter((f) => PROJECTOR_FILE.test(f) && f !== basename(modelPath));
  // mmproj-Y.gguf where Y.gguf is another model here belongs to that model
  const candidates = named.filter((f) => {
    const forModel = /^mmproj-(.+)$/i.exec(stem(f))?.[1];
    return f.toLowerCase() === own || !forModel || !lower.has(`${forModel}.gguf`.toLowerCase());
  });
  candidates.sort((a, b) => Number(b.toLowerCase() === own) - Number(a.toLowerCase() === own));
  let first: ProjectorPairing | null = null;
  for (const file of candidates) {
    // not a readable GGUF file: not a projector for anything
    const info = await readRegularHeader(join(dir, file));
    const facts = info ? projectorFacts(info) : 'unreadable';
    if (typeof facts === 'string') continue;
    const pairing = pairProjector(model, facts);
    if (file.toLowerCase() === own || pairing.compatible) return pairing;
    first ??= pairing;
  }
  return first;
}

/** One line: what a model accepts with its projector. */
export function describeAccepts(p: ProjectorPairing | null): string {
  if (!p) return 'text';
  const file = basename(p.path);
  if (!p.compatible) return `text (${file} does not fit: ${p.reason})`;
  const parts = ['text'];
  if (p.accepts.image) {
    const cost = p.tokensPerImage !== null ? `${p.tokensPerImage} tokens per image` : "tokens per image depend on the image's size";
    parts.push(`image via ${file} (${p.projectorType} projector, ${cost})`);
  }
  if (p.accepts.audio) parts.push(`audio via ${file}`);
  return parts.join('; ');
}
