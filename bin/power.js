#!/usr/bin/env node
// The installed command: runs the compiled CLI (npm run build / npm install produce dist/).
// Ctrl-C goes through one listener installed before the CLI loads: a press while the CLI is
// still loading is kept for the command (generate then ends as cancelled, exit code 130, with
// its report); later presses go to the command's handler, or end a command that has none.
const interrupts = { started: false, pending: false, handler: null };
process.on('SIGINT', () => {
  if (interrupts.handler) return interrupts.handler();
  if (!interrupts.started) {
    interrupts.pending = true;
    return;
  }
  process.exit(130);
});
const { main } = await import('../dist/app/cli/power.js');
process.exitCode = await main(process.argv.slice(2), undefined, interrupts);
