import { useShallow } from 'zustand/react/shallow';

import { AbPanel } from './components/AbPanel.js';
import { AcceptancePanel } from './components/AcceptancePanel.js';
import { ChatList } from './components/ChatList.js';
import { Composer } from './components/Composer.js';
import { Conversation } from './components/Conversation.js';
import { McpDialog } from './components/McpDialog.js';
import { ModelBar } from './components/ModelBar.js';
import { ModelsDialog } from './components/ModelsDialog.js';
import { NoticeBanner } from './components/Notice.js';
import { ProfilePicker } from './components/ProfilePicker.js';
import { ReportView } from './components/ReportView.js';
import { ThemePicker } from './components/ThemePicker.js';
import { usePower } from './components/store-context.js';
import { useGlobalKeys, useTheme } from './components/use-page-effects.js';

type Drawer = 'chats' | 'stats';

/** Opens a side panel as a drawer (narrow windows); its panel's id is the drawer's name + "-panel". */
function DrawerToggle({ drawer, label }: { drawer: Drawer; label: string }) {
  const open = usePower((s) => s.drawer === drawer);
  const toggleDrawer = usePower((s) => s.toggleDrawer);
  return (
    <button
      type="button"
      className="drawer-toggle"
      aria-expanded={open}
      aria-controls={`${drawer}-panel`}
      onClick={() => toggleDrawer(drawer)}
    >
      {label}
    </button>
  );
}

function ViewTabs() {
  const { view, setView } = usePower(useShallow((s) => ({ view: s.view, setView: s.setView })));
  return (
    <div className="tabs-row">
      <DrawerToggle drawer="chats" label="Show chats" />
      <div className="tabs" role="tablist" aria-label="View">
        <button type="button" role="tab" aria-selected={view === 'chat'} onClick={() => setView('chat')}>
          Chat
        </button>
        <button type="button" role="tab" aria-selected={view === 'report'} onClick={() => setView('report')}>
          Report
        </button>
      </div>
      <ThemePicker />
      <DrawerToggle drawer="stats" label="Show stats" />
    </div>
  );
}

function DrawerClose({ drawer, label }: { drawer: Drawer; label: string }) {
  const toggleDrawer = usePower((s) => s.toggleDrawer);
  return (
    <button type="button" className="drawer-close" onClick={() => toggleDrawer(drawer)}>
      {label}
    </button>
  );
}

export function App() {
  const { view, connected, drawer } = usePower(useShallow((s) => ({ view: s.view, connected: s.connected, drawer: s.drawer })));
  useTheme();
  useGlobalKeys();
  return (
    <div className="app" data-connected={connected} data-drawer={drawer ?? 'none'}>
      <header className="top">
        <h1 className="brand">Power</h1>
        <ModelBar />
        <ProfilePicker />
      </header>
      <div className="side-left" id="chats-panel">
        <DrawerClose drawer="chats" label="Hide chats" />
        <ChatList />
      </div>
      <main className="center">
        <ViewTabs />
        {view === 'chat' ? <Conversation /> : <ReportView />}
        <NoticeBanner />
        <Composer />
      </main>
      <aside className="side" id="stats-panel" aria-label="Reply evidence">
        <DrawerClose drawer="stats" label="Hide stats" />
        <AcceptancePanel />
        <AbPanel />
      </aside>
      <ModelsDialog />
      <McpDialog />
    </div>
  );
}
