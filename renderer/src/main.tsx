// Start-up: connect to PowerApi (window.power in Electron, the WebSocket in a browser), wire
// the store to its events, render.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './App.js';
import { StoreContext } from './components/store-context.js';
import { createPowerStore, wireEvents } from './store/index.js';
import { connect } from './transport.js';
import './styles.css';

const store = createPowerStore();
const root = createRoot(document.getElementById('root')!);
root.render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>
  </StrictMode>,
);

connect()
  .then(async (connection) => {
    void connection.closed.then(() => store.getState().setDisconnected());
    await wireEvents(store, connection.api, undefined, connection.kind === 'electron' ? 'electron' : 'browser');
  })
  .catch((error: unknown) =>
    store.getState().showNotice({
      title: 'Connecting to Power',
      message: error instanceof Error ? error.message : String(error),
      action: 'Open the address `power serve` printed (with its ?token=…) and check that it is still running.',
      code: 'internal',
    }),
  );
