// The store reaches components through context (one store per window; tests make their own).
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';

import type { PowerStore } from '../store/index.js';
import type { Store } from '../store/types.js';

export const StoreContext = createContext<PowerStore | null>(null);

/** Selectors return primitives or stable references (object-returning ones need useShallow). */
export function usePower<T>(selector: (state: Store) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('usePower outside <StoreContext.Provider>');
  return useStore(store, selector);
}
