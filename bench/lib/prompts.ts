// Plain text over the synthetic vocabulary (app/models/vocab.ts): Power and llama.cpp's tools
// tokenize it the same way (the benches check: a peer's output must contain Power's text).
export const PROMPTS: readonly string[] = [
  'the quick brown fox jumps over the lazy dog',
  'hello world, this is a test of the power model',
  'what is the answer to the question',
  'I like to write a story about water and people',
  'she said that they will come when the day is long',
  'how many people have made the first call',
  'a token is part of the model',
  'the target and the draft are fast',
];
