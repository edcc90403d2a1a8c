import { z } from 'zod';
import { parseInput } from '../../../src/domain/shared/validate';

/** The 400 a client reads for each kind of validation problem, through the one parser both doors use. */
const refusal = (schema: z.ZodType, input: unknown) => {
  try {
    parseInput(schema, input);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
};

test.each([
  [z.object({ name: z.string().max(100) }), { name: 'x'.repeat(101) }, "Invalid 'name': must be at most 100 characters long"],
  [z.object({ name: z.string().min(1) }), { name: '' }, "Invalid 'name': must not be empty"],
  [z.object({ urls: z.array(z.string()).max(4) }), { urls: ['a', 'b', 'c', 'd', 'e'] }, "Invalid 'urls': must have at most 4 items"],
  [z.object({ n: z.number().int().min(1).max(30) }), { n: 0 }, "Invalid 'n': must be at least 1"],
  [z.object({ n: z.number().int().min(1).max(30) }), { n: 31 }, "Invalid 'n': must be at most 30"],
  [z.object({ n: z.number().gt(0) }), { n: 0 }, "Invalid 'n': must be greater than 0"],
  [z.object({ n: z.number().int() }), { n: 2.5 }, "Invalid 'n': must be a whole number"],
  [z.object({ n: z.number() }), { n: 'x' }, "Invalid 'n': must be a number (it was a string)"],
  [z.object({ order: z.enum(['asc', 'desc']) }), { order: 'up' }, "Invalid 'order': must be one of 'asc', 'desc'"],
  [z.object({ at: z.string().regex(/^\d+$/) }), { at: 'x' }, "Invalid 'at': is not in the expected format"],
  [z.object({ n: z.number() }), {}, "Invalid 'n': is required"],
])('%#: a default zod message is said in plain words', (schema, input, message) => {
  expect(refusal(schema, input)).toBe(message);
});

test('a message the schema wrote itself is kept as written', () => {
  expect(refusal(z.object({ url: z.string().max(10, 'url must be at most 10 characters long') }), { url: 'x'.repeat(11) })).toBe(
    "Invalid 'url': url must be at most 10 characters long",
  );
});
