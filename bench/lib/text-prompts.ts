// Text prompts for the benches that run a model with a real vocabulary (Gemma 3 270M): plain
// text to continue, as a base model without a chat template takes it.

/** About 90 tokens of prose; repeated, a long prompt to prefill (and one that n-grams can follow). */
export const ARTICLE =
  'The history of the lighthouse is a history of coasts, ships and the people who kept the lamps burning. ' +
  'Before electric light, keepers climbed the tower several times a night to trim wicks, wind the clockwork ' +
  'that turned the lens and polish the glass, because a single dark night could mean a wreck on the rocks below. ' +
  'The first towers burned wood or coal in open braziers; later came oil lamps with reflectors, and then the ' +
  'Fresnel lens, whose rings of prisms bent the light of one flame into a beam visible for twenty miles. ';

/** Four kinds of prompt a user comparing servers meets: prose, code, a list, a long document. */
export const PROMPT_KINDS: readonly { kind: string; text: string }[] = [
  {
    kind: 'story',
    text:
      'Once upon a time, in a small village by the sea, there lived an old fisherman named Tomas and his ' +
      'granddaughter Lia. Every morning before sunrise they pushed their boat into the cold water, and every ' +
      'evening they came back with whatever the sea had given them. One morning, Lia found',
  },
  {
    kind: 'code',
    text:
      'class Vector:\n' +
      '    def __init__(self, x, y):\n' +
      '        self.x = x\n' +
      '        self.y = y\n\n' +
      '    def __add__(self, other):\n' +
      '        return Vector(self.x + other.x, self.y + other.y)\n\n' +
      '    def __sub__(self, other):\n' +
      '        return Vector(self.x - other.x, self.y - other.y)\n\n' +
      '    def __mul__(self, k):\n' +
      '        return Vector(self.x * k, self.y * k)\n\n' +
      '    def __truediv__(self, k):\n',
  },
  {
    kind: 'list',
    text:
      'Weekly plan:\n' +
      'Monday: wake up at 7, run 5 km, breakfast, work from 9 to 5, dinner at 7, read for an hour.\n' +
      'Tuesday: wake up at 7, swim 1 km, breakfast, work from 9 to 5, dinner at 7, read for an hour.\n' +
      'Wednesday: wake up at 7, run 5 km, breakfast, work from 9 to 5, dinner at 7, read for an hour.\n' +
      'Thursday:',
  },
  // about 1,200 tokens of Gemma's vocabulary
  { kind: 'article', text: ARTICLE.repeat(11) },
];
