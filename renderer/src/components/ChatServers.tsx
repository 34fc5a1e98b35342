// The MCP servers of the open chat, in a popover above the message box: a switch per configured
// server (its status beside it), and the way to the MCP servers view.
import { useShallow } from 'zustand/react/shallow';

import { chatServersAfter, serverStatusLine } from '../logic/mcp.js';
import { Popover } from './Popover.js';
import { usePower } from './store-context.js';

const NONE: readonly string[] = [];

export function ChatServers() {
  const { servers, chosen, setChatServers, openMcp } = usePower(
    useShallow((s) => ({
      servers: s.mcpServers,
      chosen: s.chat?.mcpServers ?? NONE,
      setChatServers: s.setChatMcpServers,
      openMcp: s.setMcpOpen,
    })),
  );
  const names = servers.map((s) => s.name);
  const on = chosen.filter((n) => names.includes(n));
  return (
    <Popover summary={on.length > 0 ? `Tools (${on.length})` : 'Tools'} className="chat-servers" align="up">
      <fieldset className="chat-servers-list">
        <legend>MCP servers in this chat</legend>
        {servers.length === 0 ? (
          <p className="muted">No MCP servers yet.</p>
        ) : (
          <ul>
            {servers.map((s) => (
              <li key={s.name}>
                <label className="toggle">
                  <input
                    type="checkbox"
                    checked={on.includes(s.name)}
                    onChange={(e) => void setChatServers(chatServersAfter(on, names, s.name, e.target.checked))}
                  />{' '}
                  {s.name}
                </label>{' '}
                <span className={s.status === 'error' ? 'form-errors' : 'hint'}>{serverStatusLine(s)}</span>
              </li>
            ))}
          </ul>
        )}
      </fieldset>
      <button type="button" onClick={() => openMcp(true)}>
        MCP servers…
      </button>
    </Popover>
  );
}
