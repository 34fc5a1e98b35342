// The workloads where users meet repetition (issue 56), as plain text a base model continues
// (Gemma 3 270M without a chat template): each names what repeats, and `again` marks a request
// sent twice, of which the second is measured (a regenerate, an agent asking again).
import { ARTICLE } from './text-prompts.js';

export interface RepetitionTask {
  kind: string;
  text: string;
  /** the prompt is sent once unmeasured, then again: the second reply is the sample */
  again?: boolean;
}

const FUNCTION =
  'def parse_config(path):\n' +
  '    """Read a key=value file into a dict, skipping comments and blank lines."""\n' +
  '    result = {}\n' +
  '    with open(path, encoding="utf-8") as handle:\n' +
  '        for line in handle:\n' +
  '            line = line.strip()\n' +
  '            if not line or line.startswith("#"):\n' +
  '                continue\n' +
  '            key, _, value = line.partition("=")\n' +
  '            result[key.strip()] = value.strip()\n' +
  '    return result\n';

const PARAGRAPH =
  'Our team spent the quarter moving the billing service to the new cluster. The move took longer than ' +
  'planned because the old database had tables nobody owned, and each one needed a decision before it ' +
  'could be copied. In the end we copied all of them, retired four, and the service now answers in half ' +
  'the time it used to.';

const TOOL_LOOP = Array.from(
  { length: 6 },
  (_, i) =>
    `{"tool": "read_file", "arguments": {"path": "src/module_${i}.py", "start_line": 1, "end_line": 200}}\n` +
    `{"result": "ok", "lines": ${120 + i * 7}, "path": "src/module_${i}.py"}\n`,
).join('');

const RECORDS = ['Ada Lovelace', 'Alan Turing', 'Grace Hopper', 'Edsger Dijkstra']
  .map((name, i) => `{"id": ${i + 1}, "name": "${name}", "active": ${i % 2 === 0}, "roles": ["engineer", "reviewer"], "team": "core"}`)
  .join('\n');

/** The task kinds, in its order. */
export const REPETITION_TASKS: readonly RepetitionTask[] = [
  {
    kind: 'multi-turn',
    text:
      'User: What did the keepers of old lighthouses do at night?\n' +
      `Assistant: ${ARTICLE}\n` +
      'User: Say again, word for word, what you said about the Fresnel lens.\n' +
      'Assistant: I said:',
  },
  {
    kind: 'code-edit',
    text: `${FUNCTION}\n# The same function with the parameter \`path\` renamed to \`filename\`:\n\ndef parse_config(filename):\n`,
  },
  {
    kind: 'second-draft',
    text: `First draft:\n${PARAGRAPH}\n\nSecond draft, the same text with "quarter" changed to "month":\n`,
  },
  {
    kind: 'quote-document',
    text: `Document:\n${ARTICLE.repeat(3)}\nQuestion: What did the first towers burn?\nAnswer, quoting the document: "`,
  },
  { kind: 'tool-loop', text: `Tool calls and results of an agent, one JSON object a line:\n${TOOL_LOOP}` },
  {
    kind: 'json-schema',
    text: `Records following the schema {"id": int, "name": str, "active": bool, "roles": [str], "team": str}, one a line:\n${RECORDS}\n`,
  },
  {
    kind: 'same-again',
    text: 'Write a short story about a fisherman and his granddaughter who find a message in a bottle.\n\nStory:',
    again: true,
  },
  {
    kind: 'prose',
    text: 'An essay on why cities grow along rivers, from the first settlements to modern ports.\n\n',
  },
];
