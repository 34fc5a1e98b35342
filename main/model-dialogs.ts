// The model library's native dialogs (File menu): pick GGUF files or a folder, then add them
// through the service like any other front door would. Failures are shown, never thrown.
import { dialog, type BrowserWindow } from 'electron';

import type { PowerApi } from '../app/contract/api/index.js';
import { toApiError } from '../app/contract/api/errors.js';

export async function addModelsFromDialog(window: BrowserWindow | null, api: PowerApi, kind: 'file' | 'folder'): Promise<void> {
  const options: Electron.OpenDialogOptions =
    kind === 'file'
      ? { title: 'Add Model Files', properties: ['openFile', 'multiSelections'], filters: [{ name: 'GGUF models', extensions: ['gguf'] }] }
      : { title: 'Add Model Folder', properties: ['openDirectory'] };
  const picked = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options);
  if (picked.canceled) return;
  const problems: string[] = [];
  for (const path of picked.filePaths) {
    try {
      const { skipped } = await api.models.add({ path });
      for (const s of skipped) problems.push(`${s.path}: ${s.reason}`);
    } catch (error) {
      problems.push(`${path}: ${toApiError(error).message}`);
    }
  }
  if (problems.length > 0) dialog.showErrorBox('Some models were not added', problems.join('\n'));
}
