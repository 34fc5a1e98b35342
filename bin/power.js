#!/usr/bin/env node
// The installed command: runs the compiled CLI (npm run build / npm install produce dist/).
import { main } from '../dist/main/cli/power.js';

process.exitCode = await main(process.argv.slice(2));
