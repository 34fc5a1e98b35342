// An early-exit draft cut from a target: its first blocks with its own embeddings, output norm
// and head, tensors copied byte for byte (any type, K-quants included) and the header saying
// the shorter depth. It shares the target's vocabulary by construction, so it serves
// `draft-model`; how often it agrees depends on how much the later blocks change the choice.
import { gv, kv, type GgufEntry } from '../../app/gguf/types.js';
import { readGgufInfo } from '../../app/gguf/reader.js';
import { writeGgufFrom } from '../gguf/writer.js';
import { replaceFileAtomic } from '../../app/service/storage/atomic-file.js';

export async function writeEarlyExitDraft(targetPath: string, outPath: string, blocks: number): Promise<void> {
  const info = await readGgufInfo(targetPath);
  const arch = info.metadata.get('general.architecture');
  if (arch?.type !== 'string') throw new RangeError(`${targetPath} has no general.architecture`);
  const countKey = `${arch.value}.block_count`;
  const count = info.metadata.get(countKey);
  if (!count || typeof count.value !== 'number' || blocks < 1 || blocks >= count.value) {
    throw new RangeError(`${targetPath}: a draft of ${blocks} blocks needs a target with more (${countKey} = ${String(count?.value)})`);
  }
  const metadata: GgufEntry[] = [...info.metadata].map(([key, value]) =>
    key === countKey
      ? kv(key, gv.u32(blocks))
      : key === 'general.name'
        ? kv(key, gv.str(`${String(value.value)} (first ${blocks} blocks)`))
        : kv(key, value),
  );
  const keep = info.tensors
    .map((t) => t.name)
    .filter((name) => {
      const m = /^blk\.(\d+)\./.exec(name);
      return m ? Number(m[1]) < blocks : true;
    });
  await replaceFileAtomic(outPath, (tmp) => writeGgufFrom(tmp, metadata, info, keep));
}
