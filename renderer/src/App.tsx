import { useShallow } from 'zustand/react/shallow';

import { AbPanel } from './components/AbPanel.js';
import { AcceptancePanel } from './components/AcceptancePanel.js';
import { ChatList } from './components/ChatList.js';
import { Composer } from './components/Composer.js';
import { Conversation } from './components/Conversation.js';
import { ModelBar } from './components/ModelBar.js';
import { NoticeBanner } from './components/Notice.js';
import { ProfilePicker } from './components/ProfilePicker.js';
import { ReportView } from './components/ReportView.js';
import { usePower } from './components/store-context.js';

export function App() {
  const { view, setView, connected } = usePower(useShallow((s) => ({ view: s.view, setView: s.setView, connected: s.connected })));
  return (
    <div className="app" data-connected={connected}>
      <header className="top">
        <h1 className="brand">Power</h1>
        <ModelBar />
        <ProfilePicker />
      </header>
      <ChatList />
      <main className="center">
        <div className="tabs" role="tablist" aria-label="View">
          <button type="button" role="tab" aria-selected={view === 'chat'} onClick={() => setView('chat')}>
            Chat
          </button>
          <button type="button" role="tab" aria-selected={view === 'report'} onClick={() => setView('report')}>
            Report
          </button>
        </div>
        {view === 'chat' ? <Conversation /> : <ReportView />}
        <NoticeBanner />
        <Composer />
      </main>
      <aside className="side">
        <AcceptancePanel />
        <AbPanel />
      </aside>
    </div>
  );
}
