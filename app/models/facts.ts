// The `power info` facts of a model read from its GGUF header alone (no engine, no load), for
// the model library: cheap enough for every file the user adds. test/model checks them
// against what llama.cpp itself reports for the synthetic models.
import type { ModelFacts } from '../contract/api/models.js';
import type { GgufInfo, GgufValue } from '../gguf/types.js';

/** llama.cpp's llama_ftype names (general.file_type). */
const FILE_TYPES: Record<number, string> = {
  0: 'all F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K - Medium',
  11: 'Q3_K - Small',
  12: 'Q3_K - Medium',
  13: 'Q3_K - Large',
  14: 'Q4_K - Small',
  15: 'Q4_K - Medium',
  16: 'Q5_K - Small',
  17: 'Q5_K - Medium',
  18: 'Q6_K',
  19: 'IQ2_XXS - 2.0625 bpw',
  20: 'IQ2_XS - 2.3125 bpw',
  21: 'Q2_K - Small',
  22: 'IQ3_XS - 3.3 bpw',
  23: 'IQ3_XXS - 3.0625 bpw',
  24: 'IQ1_S - 1.5625 bpw',
  25: 'IQ4_NL - 4.5 bpw',
  26: 'IQ3_S - 3.4375 bpw',
  27: 'IQ3_S mix - 3.66 bpw',
  28: 'IQ2_S - 2.5 bpw',
  29: 'IQ2_M - 2.7 bpw',
  30: 'IQ4_XS - 4.25 bpw',
  31: 'IQ1_M - 1.75 bpw',
  32: 'BF16',
  36: 'TQ1_0 - 1.69 bpw',
  37: 'TQ2_0 - 2.06 bpw',
  38: 'MXFP4 MoE',
};

const VOCAB_TYPES: Record<string, string> = {
  llama: 'spm',
  gpt2: 'bpe',
  bert: 'wpm',
  t5: 'ugm',
  rwkv: 'rwkv',
  plamo2: 'plamo2',
  none: 'none',
};

function num(v: GgufValue | undefined): number | undefined {
  if (!v) return undefined;
  if (typeof v.value === 'number') return v.value;
  if (typeof v.value === 'bigint') return Number(v.value);
  return undefined;
}

function str(v: GgufValue | undefined): string | undefined {
  return v && v.type === 'string' ? v.value : undefined;
}

export function modelFacts(info: GgufInfo): ModelFacts {
  const m = info.metadata;
  const architecture = str(m.get('general.architecture')) ?? 'unknown';
  const hp = (key: string) => num(m.get(`${architecture}.${key}`));
  const blocks = hp('block_count') ?? 0;
  const nextn = hp('nextn_predict_layers') ?? 0;
  const fileTypeId = num(m.get('general.file_type'));
  // the names llama.cpp's llama_model_ftype_name gives (this release has no "mostly" prefix)
  const fileType = fileTypeId !== undefined ? (FILE_TYPES[fileTypeId] ?? `type ${fileTypeId}`) : 'unknown';
  let parameters = 0;
  let recurrent = false;
  let attention = false;
  for (const t of info.tensors) {
    parameters += t.shape.reduce((a, b) => a * b, 1);
    if (/^blk\.\d+\.ssm_/.test(t.name)) recurrent = true;
    if (/^blk\.\d+\.attn_(k|qkv)\b/.test(t.name)) attention = true;
  }
  // an MTP sidecar holds no trunk blocks, but its architecture's recurrent state is declared all the same
  if ((hp('ssm.state_size') ?? 0) > 0) recurrent = true;
  const tokens = m.get('tokenizer.ggml.tokens');
  const model = str(m.get('tokenizer.ggml.model'));
  return {
    architecture,
    name: str(m.get('general.name')) ?? '',
    parameters,
    fileType,
    contextLength: hp('context_length') ?? 0,
    layers: blocks - nextn,
    nextnLayers: nextn,
    recurrent,
    hybrid: recurrent && attention,
    vocabType: model !== undefined ? (VOCAB_TYPES[model] ?? model) : 'none',
    vocabSize: tokens && tokens.type === 'array' ? tokens.value.length : 0,
    chatTemplate: str(m.get('tokenizer.chat_template')) !== undefined,
  };
}
