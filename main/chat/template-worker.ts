// Renders one chat template in a worker thread, so that a template that loops or explodes can
// be stopped (time) or dies alone (its heap is capped) without taking the process with it.
import { parentPort, workerData } from 'node:worker_threads';

import { renderChat, type ChatMessage, type TemplateTokens } from './template.js';

interface Job {
  template: string;
  messages: ChatMessage[];
  tokens: TemplateTokens;
}

const job = workerData as Job;
try {
  parentPort?.postMessage({ ok: true, text: renderChat(job.template, job.messages, job.tokens) });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: (error as Error).message });
}
