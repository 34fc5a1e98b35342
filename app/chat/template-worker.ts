// Renders one chat template in a child process with a capped heap, so that a template that
// loops or explodes can be stopped (time) or dies alone (V8 aborts the whole process on some
// out-of-memory paths, so a worker thread is not enough) without taking the caller with it.
import { renderChat, type ChatMessage, type TemplateTokens } from './template.js';

interface Job {
  template: string;
  messages: ChatMessage[];
  tokens: TemplateTokens;
}

process.once('message', (job: Job) => {
  let reply: { ok: true; text: string } | { ok: false; message: string };
  try {
    reply = { ok: true, text: renderChat(job.template, job.messages, job.tokens) };
  } catch (error) {
    reply = { ok: false, message: (error as Error).message };
  }
  process.send?.(reply, undefined, {}, () => process.disconnect());
});
// started: the caller's time budget for the template runs from here
process.send?.({ ready: true });
