// Renders a model's own chat template (Jinja, from its GGUF metadata) the way Hugging Face's
// apply_chat_template does, so the model sees the prompt format it was trained on.
import { Template } from '@huggingface/jinja';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TemplateTokens {
  bos: string;
  eos: string;
}

export class ChatTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatTemplateError';
  }
}

export function renderChat(template: string, messages: readonly ChatMessage[], tokens: TemplateTokens): string {
  let compiled: Template;
  try {
    compiled = new Template(template);
  } catch (error) {
    throw new ChatTemplateError(`the model's chat template does not parse: ${(error as Error).message}`);
  }
  try {
    return compiled.render({
      messages,
      add_generation_prompt: true,
      bos_token: tokens.bos,
      eos_token: tokens.eos,
    });
  } catch (error) {
    throw new ChatTemplateError(`the model's chat template failed to render: ${(error as Error).message}`);
  }
}
