// The Models dialog: the library in three groups (models, draft models, draft artifacts), adding
// a file or a folder by its path on the machine Power runs on, removing an entry (never the
// file), and downloads: the recommended pairs and any GGUF URL, with progress and cancel.
import { useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { approxSize, downloadLine, downloadPercent, latestByFile, pairFiles } from '../logic/downloads.js';
import { modelSummary } from '../logic/format.js';
import { groupLibrary } from '../logic/library.js';
import type { DownloadEntry, ModelEntry, RecommendedPair } from '../api-types.js';
import { usePower } from './store-context.js';

function LibraryEntryRow({ entry, loaded }: { entry: ModelEntry; loaded: boolean }) {
  const remove = usePower((s) => s.removeModel);
  return (
    <li className="library-entry" data-model-id={entry.id}>
      <div className="entry-text">
        <strong>{entry.name}</strong>
        {loaded && <span className="badge">loaded</span>}
        <span className="hint">{modelSummary(entry)}</span>
        <span className="hint path">{entry.path}</span>
      </div>
      <button
        type="button"
        onClick={() => void remove(entry.id)}
        title={loaded ? 'Unload it first' : 'Removes the entry; the file stays where it is'}
      >
        Remove
      </button>
    </li>
  );
}

function LibraryGroup({ id, title, note, entries }: { id: string; title: string; note: string; entries: ModelEntry[] }) {
  const engine = usePower((s) => s.engine);
  return (
    <section className="library-group" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <p className="hint">{note}</p>
      {entries.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul>
          {entries.map((e) => (
            <LibraryEntryRow key={e.id} entry={e} loaded={engine?.model?.id === e.id || engine?.draft?.id === e.id} />
          ))}
        </ul>
      )}
    </section>
  );
}

function AddModelForm() {
  const { add, result, shell } = usePower(useShallow((s) => ({ add: s.addModels, result: s.addResult, shell: s.shell })));
  const [path, setPath] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async (kind: 'file' | 'folder'): Promise<void> => {
    const sent = path;
    setBusy(true);
    // a path typed while the add was on its way is the next one: only the one sent is cleared
    if (await add(kind, sent)) setPath((now) => (now === sent ? '' : now));
    setBusy(false);
  };
  return (
    <section className="add-models" aria-labelledby="add-title">
      <h3 id="add-title">Add</h3>
      <div className="field">
        <label htmlFor="model-path">Path on this machine</label>
        <input
          id="model-path"
          value={path}
          placeholder="/models/llama-3.1-8b-q4_k_m.gguf or /models"
          aria-invalid={result?.failed === true}
          aria-describedby="add-result"
          onChange={(e) => setPath(e.target.value)}
        />
      </div>
      <div className="buttons">
        <button type="button" disabled={busy} onClick={() => void run('file')}>
          Add model file
        </button>
        <button type="button" disabled={busy} onClick={() => void run('folder')}>
          Add model folder
        </button>
      </div>
      <p className="hint">
        {shell === 'electron'
          ? 'A path on this computer; File ▸ Add Model File… and Add Model Folder… open the system dialogs.'
          : 'A path on the machine that runs `power serve` (the file is never copied, moved or deleted). A folder adds every .gguf directly in it.'}
      </p>
      <p id="add-result" className={result?.failed ? 'form-errors' : 'hint'} role={result?.failed ? 'alert' : 'status'}>
        {result?.text ?? ''}
      </p>
    </section>
  );
}

function DownloadRow({ download }: { download: DownloadEntry }) {
  const cancel = usePower((s) => s.cancelDownload);
  const percent = downloadPercent(download);
  return (
    <li className="download" data-state={download.state}>
      <span className="file">{download.fileName}</span>
      {download.state === 'running' && (
        <div
          className="download-progress"
          role="progressbar"
          aria-label={`Download ${download.fileName}`}
          aria-valuemin={0}
          aria-valuemax={100}
          {...(percent === null ? {} : { 'aria-valuenow': percent, 'aria-valuetext': `${percent}%` })}
        >
          <div className="fill" style={{ width: `${percent ?? 0}%` }} />
        </div>
      )}
      <span className={download.state === 'failed' ? 'form-errors' : 'hint'}>
        {percent !== null && download.state === 'running' ? `${percent}% · ` : ''}
        {downloadLine(download)}
      </span>
      {download.state === 'running' && (
        <button type="button" onClick={() => void cancel(download.id)}>
          Cancel download
        </button>
      )}
    </li>
  );
}

function RecommendedPairRow({ pair, byFile }: { pair: RecommendedPair; byFile: Map<string, DownloadEntry> }) {
  const start = usePower((s) => s.startDownload);
  const files = pairFiles(pair);
  const running = files.some((f) => byFile.get(f.fileName)?.state === 'running');
  return (
    <li className="pair">
      <div className="entry-text">
        <strong>{pair.title}</strong>
        <span className="hint">
          {pair.strategy}, K{pair.k}
          {pair.s === null ? '' : `/S${pair.s}`} · {approxSize(pair)} · {pair.note}
        </span>
      </div>
      <button
        type="button"
        disabled={running}
        aria-describedby={`pair-${pair.id}`}
        onClick={() => void start(files.map((f) => ({ url: f.url, fileName: f.fileName, sha256: f.sha256 })))}
      >
        Download
      </button>
      <span id={`pair-${pair.id}`} className="sr-only">
        {pair.title}
      </span>
    </li>
  );
}

function DownloadFromUrl() {
  const start = usePower((s) => s.startDownload);
  const [url, setUrl] = useState('');
  return (
    <form
      className="download-url"
      onSubmit={(e) => {
        e.preventDefault();
        if (url.trim() === '') return;
        void start([{ url: url.trim() }]);
        setUrl('');
      }}
    >
      <div className="field">
        <label htmlFor="download-url">GGUF address</label>
        <input
          id="download-url"
          type="url"
          value={url}
          placeholder="https://huggingface.co/…/model.gguf"
          onChange={(e) => setUrl(e.target.value)}
        />
      </div>
      <button type="submit" disabled={url.trim() === ''}>
        Download from URL
      </button>
    </form>
  );
}

function Downloads() {
  const { recommended, downloads, error } = usePower(
    useShallow((s) => ({ recommended: s.recommended, downloads: s.downloads, error: s.downloadError })),
  );
  const byFile = latestByFile(downloads);
  return (
    <section className="downloads" aria-labelledby="downloads-title">
      <h3 id="downloads-title">Download</h3>
      <p className="hint">
        Recommended target + draft pairs, fetched into the library folder (an interrupted download resumes when started again).
      </p>
      <ul className="pairs" aria-label="Recommended pairs">
        {recommended.map((p) => (
          <RecommendedPairRow key={p.id} pair={p} byFile={byFile} />
        ))}
      </ul>
      <DownloadFromUrl />
      {error && (
        <p className="form-errors" role="alert">
          {error}
        </p>
      )}
      {downloads.length > 0 && (
        <ul className="download-list" aria-label="Downloads">
          {[...byFile.values()].map((d) => (
            <DownloadRow key={d.id} download={d} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function ModelsDialog() {
  const { open, setOpen, models } = usePower(useShallow((s) => ({ open: s.modelsOpen, setOpen: s.setModelsOpen, models: s.models })));
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  const groups = groupLibrary(models);
  return (
    <dialog ref={dialog} className="models-dialog" aria-label="Models" onClose={() => setOpen(false)}>
      <header className="dialog-head">
        <h2>Model library</h2>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </header>
      {open && (
        <div className="dialog-body">
          <AddModelForm />
          <LibraryGroup
            id="group-models"
            title="Models"
            note="To chat with: the Model picker offers these first."
            entries={groups.models}
          />
          <LibraryGroup
            id="group-drafts"
            title="Draft models"
            note="Smaller models of a family, used by the draft-model method (they can chat too)."
            entries={groups.drafts}
          />
          <LibraryGroup
            id="group-artifacts"
            title="Draft artifacts"
            note="EAGLE-3, DFlash and DSpark heads: they only propose for their target."
            entries={groups.artifacts}
          />
          <Downloads />
        </div>
      )}
    </dialog>
  );
}
