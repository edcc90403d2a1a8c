/**
 * The simulator samples schemas that anyone with a free test key sends: whatever a schema asks
 * (a billion characters, a property that requires itself, thousands of levels), the sample
 * comes back, bounded in size, without a stack overflow; ordinary schemas still get valid values.
 */
import Ajv from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Worker } from 'node:worker_threads';
import { JsonSampler, MAX_OUTPUT_CHARS } from '../../../src/providers/simulator/json-sample';
import { pollUntil } from '../../support/poll';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

type Schema = Record<string, unknown>;

/** `depth` objects, each requiring the next: built in a loop, as the test must not recurse either. */
function nested(depth: number): Schema {
  let schema: Schema = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

function wide(count: number, required: boolean): Schema {
  const properties: Schema = {};
  for (let i = 0; i < count; i++) properties[`p${i}`] = { type: 'string' };
  return { type: 'object', properties, ...(required ? { required: Object.keys(properties) } : {}) };
}

const tool = (properties: Schema): Schema => ({ type: 'object', properties, required: Object.keys(properties) });

const HOSTILE: Record<string, Schema> = {
  'minLength 1e9 in a tool parameter': tool({ a: { type: 'string', minLength: 1_000_000_000 } }),
  'minLength 5e8 as the whole schema': { type: 'string', minLength: 500_000_000 },
  'minLength 1e9 with a pattern': { type: 'string', minLength: 1_000_000_000, pattern: '^x*$' },
  'minItems 1e8 without items': tool({ a: { type: 'array', minItems: 100_000_000 } }),
  'minItems 5e7 of strings': { type: 'array', minItems: 50_000_000, items: { type: 'string' } },
  'minItems 1e8 of huge strings': { type: 'array', minItems: 100_000_000, items: { type: 'string', minLength: 1_000_000_000 } },
  'minItems 1e8 of objects': { type: 'array', minItems: 100_000_000, items: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } },
  'minItems 1e8 nested in minItems 1e8': { type: 'array', minItems: 100_000_000, items: { type: 'array', minItems: 100_000_000, items: { type: 'number' } } },
  'minProperties 1e8': { type: 'object', minProperties: 100_000_000 },
  'recursive $ref into $defs': { $defs: { n: { type: 'object', properties: { c: { $ref: '#/$defs/n' } }, required: ['c'] } }, $ref: '#/$defs/n' },
  'recursive $ref to the root': { type: 'object', properties: { a: { $ref: '#' } }, required: ['a'] },
  'recursive $ref through an array with minItems': { $defs: { n: { type: 'array', minItems: 1000, items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' },
  'anyOf that refers to itself': { $defs: { u: { anyOf: [{ $ref: '#/$defs/u' }] } }, $ref: '#/$defs/u' },
  'allOf that refers to itself': { type: 'string', allOf: [{ $ref: '#' }] },
  'parameters nested 2,000 deep': nested(2000),
  'parameters nested 100,000 deep': nested(100_000),
  '100,000 required properties': wide(100_000, true),
  '100,000 optional properties under minItems 1e8': { type: 'array', minItems: 100_000_000, items: wide(100_000, false) },
  'allOf of 100,000 parts': {
    allOf: Array.from({ length: 100_000 }, (_, i) => ({ type: 'object', properties: { [`p${i}`]: { type: 'string' } }, required: [`p${i}`] })),
  },
  'a required list of 200,000 names in allOf': { allOf: [{ type: 'object', required: Array.from({ length: 200_000 }, (_, i) => `n${i}`) }] },
  'a union of 100,000 null variants': { type: 'array', minItems: 100_000_000, items: { anyOf: Array.from({ length: 100_000 }, () => ({ type: 'null' })) } },
  'a backtracking pattern': { type: 'array', minItems: 1000, items: { type: 'string', pattern: '^(a+)+$', minLength: 30 } },
  'a long key name': tool({ ['k'.repeat(1_000_000)]: { type: 'string' } }),
};

test.each(Object.entries(HOSTILE))('%s: a bounded sample comes back', (_name, schema) => {
  const sample = new JsonSampler(schema, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!').sample();
  expect(JSON.stringify(sample).length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
});

test('a string as long as the room allows, of the asked type', () => {
  const sample = new JsonSampler({ type: 'string', minLength: 1_000_000_000 }, 'hi').sample();
  expect(typeof sample).toBe('string');
  expect((sample as string).length).toBe(MAX_OUTPUT_CHARS - 2);
});

test('a required self-reference ends in the smallest value of its type', () => {
  let node = new JsonSampler(HOSTILE['recursive $ref into $defs'], 'hi').sample() as Record<string, unknown>;
  let depth = 0;
  while (Object.keys(node).length > 0) {
    node = node.c as Record<string, unknown>;
    depth++;
  }
  expect(node).toEqual({});
  expect(depth).toBeGreaterThan(8);
});

test('a nullable self-reference ends in null past the depth limit, so the sample stays valid', () => {
  const schema = {
    $defs: { item: { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/item' }, { type: 'null' }] } }, required: ['next'] } },
    $ref: '#/$defs/item',
  };
  const validate = ajv.compile(schema);
  expect(validate(new JsonSampler(schema, 'hi').sample())).toBe(true);
});

const ORDINARY: Record<string, Schema> = {
  'minLength and minItems that fit': {
    type: 'object',
    properties: { s: { type: 'string', minLength: 2000 }, list: { type: 'array', minItems: 50, items: { type: 'integer', minimum: 3 } } },
    required: ['s', 'list'],
  },
  'a 20-deep required chain': nested(20),
  'a pattern with a long preferred value': { type: 'string', pattern: '^[A-Za-z ]+$' },
  'many patterned items': { type: 'array', minItems: 200, items: { type: 'string', pattern: '^[0-9]{4}$' } },
  '300 required properties': wide(300, true),
};

test.each(Object.entries(ORDINARY))('%s: still valid', (_name, schema) => {
  const value = new JsonSampler(schema, 'Weather in Paris').sample();
  const validate = ajv.compile(schema);
  expect({ valid: validate(value), errors: validate.errors }).toEqual({ valid: true, errors: null });
});

test('the same schema gives the same sample', () => {
  const schema = ORDINARY['many patterned items'];
  expect(new JsonSampler(schema, 'x').sample()).toEqual(new JsonSampler(schema, 'x').sample());
});

/** Sleeps this thread (no CPU) until the pattern watchdog stops it, however late it fires. */
function stallUntilStopped(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}

/** Runs `sample` with the first pattern test stalled; answers the sample and how many tests ran. */
function sampleWithFirstTestStalled(sample: () => unknown): { value: unknown; tests: number } {
  const test = RegExp.prototype.test;
  let tests = 0;
  const stalled = vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, text: string) {
    if (tests++ === 0) stallUntilStopped();
    return test.call(this, text);
  });
  try {
    return { value: sample(), tests };
  } finally {
    stalled.mockRestore();
  }
}

test('a stall of the process while a pattern is tried does not change the sample', () => {
  // The thread sleeps (no CPU) past the whole pattern budget on its first test, as when the
  // machine is busy elsewhere: the sample must be the one an unhurried run gives.
  const schema = ORDINARY['many patterned items'];
  const unhurried = new JsonSampler(schema, 'x').sample();
  const { value, tests } = sampleWithFirstTestStalled(() => new JsonSampler(schema, 'x').sample());
  expect(tests).toBeGreaterThan(1); // the stalled run was stopped and run again
  expect(value).toEqual(unhurried);
  expect(ajv.compile(schema)(value)).toBe(true);
});

test('CPU that other threads of the process spend during a stall is not charged to the pattern', async () => {
  // Two worker threads spin while this one sleeps: the process's CPU time passes the budget, this
  // thread's does not (the garbage collector, libvips and the thread pool share the process).
  const schema = ORDINARY['many patterned items'];
  const unhurried = new JsonSampler(schema, 'x').sample();
  const spinning = new Int32Array(new SharedArrayBuffer(8));
  const spinners = [0, 1].map(
    (slot) =>
      new Worker(
        `const { workerData } = require('node:worker_threads');
         const flags = new Int32Array(workerData.buffer);
         Atomics.store(flags, workerData.slot, 1);
         while (Atomics.load(flags, workerData.slot) === 1) {}`,
        { eval: true, workerData: { buffer: spinning.buffer, slot } },
      ),
  );
  try {
    await pollUntil(
      async () => spinning[0] === 1 && spinning[1] === 1,
      (both) => both,
      10_000,
      5,
    );
    const { value, tests } = sampleWithFirstTestStalled(() => new JsonSampler(schema, 'x').sample());
    expect(tests).toBeGreaterThan(1);
    expect(value).toEqual(unhurried);
  } finally {
    Atomics.store(spinning, 0, 0);
    Atomics.store(spinning, 1, 0);
    await Promise.all(spinners.map((spinner) => spinner.terminate()));
  }
});
