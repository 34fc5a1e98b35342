// power info <file.gguf> [--draft <file.gguf>] [--mmproj <file.gguf>] [--device auto|cuda|vulkan|cpu] [--json]
import { strategyAvailability, STRATEGIES } from '../contract/strategies.js';
import { readBuildInfo } from '../engine/build-info.js';
import { DEVICE_REQUESTS, describeDevice } from '../engine/device-select.js';
import { describeEstimate } from '../engine/memory-estimate.js';
import { ASSISTANT_ARCH, checkDraftCompatibility, draftKind, type DraftCompatibility } from '../models/draft-compat.js';
import { isProjector, readRegularHeader } from '../models/projector.js';
import { describeGroups, tensorTypesByGroup } from '../models/tensor-groups.js';
import { choice, parseFlags, str } from './args.js';
import { UsageError } from './errors.js';
import { describePairing, pairingFor, projectorReport } from './info-projector.js';
import { checkFile, openModel } from '../runtime/open-model.js';

export const INFO_USAGE = `power info <model.gguf> [--draft <draft.gguf>] [--mmproj <mmproj.gguf>] [--device auto|cuda|vulkan|cpu] [--json]
  Shows a model's architecture, size, quantization, its tensor types by part (MTP block, draft
  head, FFN, attention, embeddings/output, other), context, layers, vocabulary, chat template,
  which speculative strategies it can serve (with the reason when not), and the device it
  would run on (on CUDA: the memory estimate at the default context and whether it fits).
  With --draft: what the draft is (a plain draft model, an eagle3/dflash/dspark artifact, or a
  Gemma 4 assistant or MTP sidecar for mtp), the facts its header declares, and whether it fits
  this target (the reason when not).
  What the model accepts: text, and images through the multimodal projector beside it
  (mmproj-<model>.gguf, else one of the model's width) with the tokens an image costs.
  With --mmproj: that projector checked against the model instead (the reason when it does not fit).
  On a projector (mmproj-*.gguf): its type, what it accepts, image and patch size, tokens per image
  and the embedding width of the models it pairs with.`;

/** The draft's kind, declared facts and compatibility, for the text report. */
function describeDraft(path: string, d: DraftCompatibility): string[] {
  const what =
    d.kind === 'draft-model'
      ? `plain draft model (${d.architecture})`
      : d.kind === 'mtp' && d.architecture === ASSISTANT_ARCH
        ? `Gemma 4 assistant for --strategy mtp (general.architecture ${d.architecture}): reads the target's KV cache and hidden rows`
        : d.kind === 'mtp'
          ? `MTP sidecar for --strategy mtp (general.architecture ${d.architecture}): NextN layers without a trunk, fed the target's hidden rows`
          : `${d.kind} artifact (general.architecture ${d.architecture})`;
  const lines = [`draft         ${path}`, `  kind        ${what}`];
  const a = d.artifact;
  if (a) {
    lines.push(`  reads       target layers ${a.targetLayers.join(', ')} of a target with hidden size ${a.targetHidden}`);
    lines.push(
      `  hidden      ${a.hidden}; own embeddings ${a.ownEmbeddings ? 'yes' : "no (the target's)"}, own head ${a.ownOutput ? 'yes' : "no (the target's)"}` +
        (a.draftVocab !== undefined ? `; token map d2t over ${a.draftVocab} tokens` : ''),
    );
    if (a.blockSize !== undefined) {
      lines.push(
        `  block       ${a.blockSize} (at most ${a.maxDraft} proposals per round: K ≤ ${a.maxDraft})` +
          (a.maskToken !== undefined ? `; mask token ${a.maskToken}` : ''),
      );
    }
  }
  lines.push(`  fits target ${d.compatible ? 'yes' : `no: ${d.reason}`}`);
  return lines;
}

export async function infoCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { draft: { type: 'string' }, mmproj: { type: 'string' }, device: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  const path = positionals[0];
  if (!path) throw new UsageError('power info needs a model file: power info <model.gguf>');
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';

  // a header that cannot be read is reported by openModel's checks below
  const header = await readRegularHeader(path);
  if (header && isProjector(header)) {
    if (values.draft !== undefined || values.mmproj !== undefined) {
      throw new UsageError(
        `${path} is a multimodal projector: --draft and --mmproj go with a model (power info <model.gguf> --mmproj ${path})`,
      );
    }
    const report = projectorReport(path, header);
    out(values.json ? JSON.stringify(report.json, null, 2) + '\n' : report.lines.join('\n') + '\n');
    return 0;
  }
  const projector = header ? await pairingFor(path, header, str(values, 'mmproj')) : { pairing: null, gguf: null };

  // info reads metadata only: the model is loaded on the CPU, the device is only reported
  const opened = await openModel(path, {
    device,
    gpuLayers: -1,
    metadataOnly: true,
    ...(projector.gguf ? { plan: { projector: projector.gguf } } : {}),
  });
  try {
    const draftPath = str(values, 'draft');
    const draft = draftPath ? checkDraftCompatibility(opened.gguf, await checkFile(draftPath, readBuildInfo())) : undefined;
    const i = opened.info;
    const report = {
      architecture: i.architecture,
      parameters: i.parameters,
      fileType: i.fileType,
      contextLength: i.contextLength,
      layers: i.layers,
      nextnLayers: i.nextnLayers,
      recurrent: i.recurrent,
      vocabType: i.vocabType,
      vocabSize: i.vocabSize,
      chatTemplate: i.chatTemplate !== null,
      accepts: {
        text: true,
        image: projector.pairing?.compatible === true && projector.pairing.accepts.image,
        audio: projector.pairing?.compatible === true && projector.pairing.accepts.audio,
      },
      projector: projector.pairing,
      strategies: strategyAvailability({
        nextnLayers: i.nextnLayers,
        draftOnly: draftKind(opened.gguf) === 'mtp',
        ...(draft ? { draft } : {}),
      }),
      ...(draft ? { draft: { path: draftPath, ...draft } } : {}),
      // what each part of the model is stored as (a TBQ4 artifact: docs/cli.md "power quantize")
      tensorGroups: tensorTypesByGroup(opened.gguf),
      device: {
        kind: opened.placement.kind,
        name: describeDevice(opened.placement.device),
        flavour: opened.placement.flavour,
        choice: opened.placement.note,
        memory: opened.memory
          ? {
              contextSize: opened.memory.plan.contextSize,
              ...opened.memory.estimate,
              freeBytes: opened.placement.device.freeBytes,
              fits: opened.memory.refusal === null,
            }
          : null,
      },
    };
    if (values.json) {
      out(JSON.stringify(report, null, 2) + '\n');
      return 0;
    }
    const lines = [
      `model         ${path}`,
      `architecture  ${report.architecture}${i.hybrid ? ' (hybrid: recurrent + attention)' : ''}`,
      `parameters    ${report.parameters.toLocaleString('en-US')}`,
      `file type     ${report.fileType}`,
      `context       ${report.contextLength} tokens (trained)`,
      `layers        ${report.layers}${report.nextnLayers ? ` + ${report.nextnLayers} NextN/MTP` : ''}`,
      `recurrent     ${report.recurrent ? 'yes: S (rollback snapshots) applies' : 'no: rollback is free, S does not apply'}`,
      `vocabulary    ${report.vocabType}, ${report.vocabSize} tokens`,
      `chat template ${report.chatTemplate ? 'yes' : 'no'}`,
      ...describePairing(projector.pairing),
      `device        ${report.device.name}${report.device.choice ? ` [${report.device.choice}]` : ''}`,
      ...(opened.memory
        ? [
            `memory        ${describeEstimate(opened.memory.estimate, opened.memory.plan)}: ` +
              (opened.memory.refusal ? 'does NOT fit' : 'fits'),
          ]
        : []),
      'tensor types',
      ...describeGroups(report.tensorGroups).map((l) => `  ${l}`),
      ...(draft && draftPath ? describeDraft(draftPath, draft) : []),
      'strategies',
      ...STRATEGIES.map((s) => {
        const a = report.strategies[s];
        return `  ${s.padEnd(Math.max(...STRATEGIES.map((n) => n.length)) + 2)}${a.available ? 'available' : `no: ${a.reason}`}`;
      }),
    ];
    out(lines.join('\n') + '\n');
    return 0;
  } finally {
    await opened.engine.close();
  }
}
