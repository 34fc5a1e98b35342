// npm install's first step (package.json's preinstall): stops with one clear line where this
// Node.js is older than package.json's engines (>= 20.19: Vite 8 builds the UI with it), before
// the native addon and the UI build fail on it in less obvious ways. npm itself only warns.
// Plain syntax on purpose: it has to run on the old Node it refuses.
const [major, minor] = process.versions.node.split('.').map(Number);
if (!(major > 20 || (major === 20 && minor >= 19))) {
  console.error(
    `power: Node.js ${process.version} (${process.execPath}) is too old: Power needs Node.js >= 20.19. ` +
      '`bash scripts/setup-system.sh` installs Node.js 22.20.0 (from the npm registry) into /usr/local where node is missing or older; ' +
      'or install a newer Node.js yourself, put it first in PATH, and run npm ci again.',
  );
  process.exit(1);
}
