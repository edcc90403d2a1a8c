/**
 * The simulator's JSON values are valid against the schemas real clients send: checked with
 * Ajv (a JSON Schema validator) over the shapes zod, OpenAI's strict mode and hand-written
 * function parameters produce.
 */
import Ajv from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { JsonSampler } from '../../../src/providers/simulator/json-sample';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

const SCHEMAS: Record<string, Record<string, unknown>> = {
  'zod object with enums, arrays, nullable and bounds': z.toJSONSchema(
    z.object({
      name: z.string().min(3).max(5),
      age: z.number().int().min(18).max(99),
      ratio: z.number().gt(0).lt(1),
      even: z.number().int().multipleOf(4).min(5),
      kind: z.enum(['a', 'b']),
      tags: z.array(z.string()).min(2).max(3),
      nested: z.object({ ok: z.boolean(), when: z.string().datetime() }),
      maybe: z.string().nullable(),
      email: z.string().email(),
      id: z.string().uuid(),
      literal: z.literal('fixed'),
      union: z.union([z.number(), z.string()]),
    }),
  ),
  'OpenAI strict-mode style with $defs and a recursive $ref': {
    type: 'object',
    properties: { root: { $ref: '#/$defs/node' } },
    required: ['root'],
    additionalProperties: false,
    $defs: {
      node: {
        type: 'object',
        properties: { value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
        required: ['value', 'children'],
        additionalProperties: false,
      },
    },
  },
  'type arrays, allOf, patterns and tuples': {
    type: 'object',
    properties: {
      maybeNumber: { type: ['null', 'number'], minimum: 3 },
      merged: {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] },
        ],
      },
      code: { type: 'string', pattern: '^[A-Z]{4}$' },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2 },
      empty: { type: 'array', maxItems: 0 },
    },
    required: ['maybeNumber', 'merged', 'code', 'pair', 'empty'],
  },
};

test.each(Object.entries(SCHEMAS))('%s', (_name, schema) => {
  const value = new JsonSampler(schema, 'Weather in Paris').sample();
  const validate = ajv.compile(schema);
  expect({ valid: validate(value), errors: validate.errors }).toEqual({ valid: true, errors: null });
});

test('strings carry the conversation, so a developer sees their input come back', () => {
  expect(new JsonSampler({ type: 'object', properties: { city: { type: 'string' } } }, 'Lyon').sample()).toEqual({ city: 'Lyon' });
});
