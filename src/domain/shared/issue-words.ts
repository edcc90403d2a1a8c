/**
 * A validation issue in the words of an API's error message. zod's own messages are written for
 * developers of the schema ("Too big: expected string to have <=100 characters", "Invalid
 * option: expected one of \"a\"|\"b\""); a client reads "must be at most 100 characters long"
 * and "must be one of 'a', 'b'". A message the schema wrote itself is kept as written.
 */
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const ZOD_DEFAULT = /^(Too big: expected|Too small: expected|Invalid input: expected|Invalid option: expected|Invalid string: must match pattern|Invalid URL$)/;

const A_TYPE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  bigint: 'a whole number',
};

export function issueWords(issue: Issue): string {
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'too_big':
      return bound('at most', 'less than', issue.origin, Number(issue.maximum), issue.inclusive !== false);
    case 'too_small':
      if (Number(issue.minimum) === 1 && issue.inclusive !== false && issue.origin === 'string') return 'must not be empty';
      return bound('at least', 'greater than', issue.origin, Number(issue.minimum), issue.inclusive !== false);
    case 'invalid_type': {
      const received = /received (\w+)/.exec(issue.message)?.[1];
      const expected = A_TYPE[issue.expected] ?? issue.expected;
      // 2.5 for an integer: "a number" would say nothing the client does not know.
      const said = received && !(issue.expected === 'int' && received === 'number') ? ` (it was ${A_TYPE[received] ?? received})` : '';
      return `must be ${expected}${said}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'must be a URL' : 'is not in the expected format';
    default:
      return issue.message;
  }
}

function bound(inclusiveWord: string, exclusiveWord: string, origin: string, limit: number, inclusive: boolean): string {
  const word = inclusive ? inclusiveWord : exclusiveWord;
  if (origin === 'string') return `must be ${word} ${limit} character${limit === 1 ? '' : 's'} long`;
  if (origin === 'array' || origin === 'set') return `must have ${word} ${limit} item${limit === 1 ? '' : 's'}`;
  return `must be ${word} ${limit}`;
}
