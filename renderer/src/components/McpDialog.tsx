// Settings → MCP servers: the configured servers with their status (connected, or failed with the
// reason) and tools, which of them a chat offers, Test and Remove; adding a server (a command
// Power starts over stdio, or a URL on this machine) and importing the mcp.json that LM Studio and
// Claude Desktop read. A served page may not add a command: the service refuses it and the view
// says where to add one instead.
import { useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import {
  describeTransport,
  EMPTY_MCP_FORM,
  offeredAfter,
  serverFromForm,
  serverStatusLine,
  STDIO_FROM_PAGE,
  toolOffered,
  type McpServerForm,
} from '../logic/mcp.js';
import type { McpServerEntry } from '../api-types.js';
import { usePower } from './store-context.js';

function ServerTools({ server }: { server: McpServerEntry }) {
  const { setOffered, forget, busy } = usePower(
    useShallow((s) => ({ setOffered: s.setMcpOffered, forget: s.forgetAlwaysAllowed, busy: s.mcpBusy })),
  );
  if (server.tools.length === 0) return <p className="muted">No tools listed yet: Test starts the server and lists them.</p>;
  return (
    <fieldset className="mcp-tools">
      <legend>Tools offered to the model</legend>
      <ul>
        {server.tools.map((t) => (
          <li key={t.name}>
            <label className="toggle" title={t.description}>
              <input
                type="checkbox"
                checked={toolOffered(server, t.name)}
                disabled={busy}
                onChange={(e) => void setOffered(server.name, offeredAfter(server, t.name, e.target.checked))}
              />{' '}
              {t.name}
            </label>
            {server.alwaysAllow.includes(t.name) && (
              <>
                {' '}
                <span className="badge">always allowed</span>{' '}
                <button type="button" disabled={busy} onClick={() => void forget(server.name, t.name)}>
                  Ask again for {t.name}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

function ServerRow({ server }: { server: McpServerEntry }) {
  const { test, remove, busy } = usePower(useShallow((s) => ({ test: s.testMcpServer, remove: s.removeMcpServer, busy: s.mcpBusy })));
  return (
    <li className="mcp-server" data-status={server.status} aria-label={`MCP server ${server.name}`}>
      <div className="mcp-server-head">
        <div className="entry-text">
          <strong>{server.name}</strong>
          <span className="hint path">
            {server.transport.kind === 'stdio' ? 'command: ' : 'URL: '}
            {describeTransport(server.transport)}
          </span>
          <span className={server.status === 'error' ? 'form-errors mcp-status' : 'hint mcp-status'}>{serverStatusLine(server)}</span>
        </div>
        <button type="button" disabled={busy} onClick={() => void test(server.name)}>
          Test {server.name}
        </button>
        <button type="button" disabled={busy} onClick={() => void remove(server.name)} title="Chats that used it no longer offer its tools">
          Remove {server.name}
        </button>
      </div>
      <ServerTools server={server} />
    </li>
  );
}

/** a labelled text field of the Add form */
function FormField({
  id,
  label,
  value,
  onChange,
  placeholder,
  lines,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
  lines?: number;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {lines ? (
        <textarea id={id} rows={lines} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input id={id} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
      )}
    </div>
  );
}

function AddServerForm() {
  const { add, busy, shell } = usePower(useShallow((s) => ({ add: s.addMcpServer, busy: s.mcpBusy, shell: s.shell })));
  const [form, setForm] = useState<McpServerForm>(EMPTY_MCP_FORM);
  const [errors, setErrors] = useState<string[]>([]);
  const field = (key: keyof McpServerForm) => (value: string) => setForm((f) => ({ ...f, [key]: value }));
  const submit = async (): Promise<void> => {
    const checked = serverFromForm(form);
    setErrors(checked.ok ? [] : checked.errors);
    if (checked.ok && (await add(checked.server))) setForm(EMPTY_MCP_FORM);
  };
  return (
    <form
      className="mcp-add"
      aria-labelledby="mcp-add-title"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3 id="mcp-add-title">Add a server</h3>
      <FormField id="mcp-name" label="Name" value={form.name} onChange={field('name')} placeholder="files" />
      <fieldset className="mcp-kind">
        <legend>Connection</legend>
        <label className="toggle">
          <input type="radio" name="mcp-kind" checked={form.kind === 'stdio'} onChange={() => field('kind')('stdio')} /> Command (stdio)
        </label>
        <label className="toggle">
          <input type="radio" name="mcp-kind" checked={form.kind === 'http'} onChange={() => field('kind')('http')} /> URL on this machine
          (streamable HTTP)
        </label>
      </fieldset>
      {form.kind === 'stdio' ? (
        <>
          {shell === 'browser' && <p className="hint">{STDIO_FROM_PAGE}</p>}
          <FormField id="mcp-command" label="Command" value={form.command} onChange={field('command')} placeholder="npx" />
          <FormField
            id="mcp-args"
            label="Arguments (one per line)"
            value={form.args}
            onChange={field('args')}
            placeholder={'-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes'}
            lines={3}
          />
          <FormField id="mcp-env" label="Environment (KEY=VALUE, one per line)" value={form.env} onChange={field('env')} lines={2} />
        </>
      ) : (
        <>
          <FormField id="mcp-url" label="URL" value={form.url} onChange={field('url')} placeholder="http://127.0.0.1:8931/mcp" />
          <FormField
            id="mcp-headers"
            label="Headers (Name: value, one per line)"
            value={form.headers}
            onChange={field('headers')}
            lines={2}
          />
        </>
      )}
      <button type="submit" disabled={busy}>
        Add server
      </button>
      {errors.length > 0 && (
        <ul className="form-errors" role="alert" aria-label="What to fix">
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
    </form>
  );
}

function ImportForm() {
  const { importMcp, result, busy } = usePower(useShallow((s) => ({ importMcp: s.importMcp, result: s.mcpImport, busy: s.mcpBusy })));
  const [text, setText] = useState('');
  const [replace, setReplace] = useState(false);
  return (
    <form
      className="mcp-import"
      aria-labelledby="mcp-import-title"
      onSubmit={(e) => {
        e.preventDefault();
        void importMcp(text, replace).then((ok) => ok && setText(''));
      }}
    >
      <h3 id="mcp-import-title">Import an mcp.json</h3>
      <p className="hint">
        The file LM Studio and Claude Desktop read: {'{"mcpServers": {"name": {"command", "args", "env"} or {"url", "headers"}}}'}.
      </p>
      <div className="field">
        <label htmlFor="mcp-json">mcp.json</label>
        <textarea id="mcp-json" rows={5} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </div>
      <div className="buttons">
        <label className="file-pick">
          Open a file…{' '}
          <input
            type="file"
            accept=".json,application/json"
            aria-label="Open an mcp.json file"
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (file) void file.text().then(setText);
              e.target.value = '';
            }}
          />
        </label>
        <label className="toggle">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} /> Replace servers of the same name
        </label>
        <button type="submit" disabled={busy || text.trim() === ''}>
          Import
        </button>
      </div>
      {result && result.skipped.length > 0 && (
        <ul className="form-errors" aria-label="Skipped entries">
          {result.skipped.map((s) => (
            <li key={s.name}>
              {s.name}: {s.reason}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

export function McpDialog() {
  const { open, setOpen, servers, result } = usePower(
    useShallow((s) => ({ open: s.mcpOpen, setOpen: s.setMcpOpen, servers: s.mcpServers, result: s.mcpResult })),
  );
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={dialog} className="mcp-dialog" aria-label="MCP servers" onClose={() => setOpen(false)}>
      <header className="dialog-head">
        <h2>MCP servers</h2>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </header>
      {open && (
        <div className="dialog-body">
          <p className="hint">
            Tools a chat can offer its model. Nothing runs without your answer in the chat: allow once, always allow the tool, or deny.
          </p>
          <p id="mcp-result" className={result?.failed ? 'form-errors' : 'hint'} role={result?.failed ? 'alert' : 'status'}>
            {result?.text ?? ''}
          </p>
          <section aria-labelledby="mcp-list-title">
            <h3 id="mcp-list-title">Servers</h3>
            {servers.length === 0 ? (
              <p className="muted">None yet: add one below or import an mcp.json.</p>
            ) : (
              <ul className="mcp-servers">
                {servers.map((s) => (
                  <ServerRow key={s.name} server={s} />
                ))}
              </ul>
            )}
          </section>
          <AddServerForm />
          <ImportForm />
        </div>
      )}
    </dialog>
  );
}
