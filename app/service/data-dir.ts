// Where Power keeps chats, the model library and settings: the OS convention for per-user
// application data, unless POWER_DATA_DIR (or a front door's --data-dir) says otherwise.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.POWER_DATA_DIR) return env.POWER_DATA_DIR;
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Power');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Power');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'power');
}
