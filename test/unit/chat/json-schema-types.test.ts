import { chatRequestSchema } from '../../../src/domain/chat/chat-request';
import { unknownSchemaType } from '../../../src/domain/chat/json-schema-types';
import { responsesRequestSchema } from '../../../src/domain/chat/responses/responses-request';
import { DomainError } from '../../../src/domain/errors/domain-error';
import { parseInput } from '../../../src/domain/shared/validate';

const chat = (over: Record<string, unknown>) => ({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], ...over });
const responses = (over: Record<string, unknown>) => ({ model: 'svc-chat-1', input: 'hi', ...over });
const withSchema = (schema: unknown) => chat({ response_format: { type: 'json_schema', json_schema: { name: 's', schema } } });
const misspelt = { type: 'object', properties: { a: { type: 'strng' } } };

function refusal(schema: Parameters<typeof parseInput>[0], input: unknown): DomainError {
  try {
    parseInput(schema, input);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('accepted');
}

describe('an unknown JSON Schema type is a 400 naming where it is', () => {
  test.each([
    ['chat response_format', chatRequestSchema, withSchema(misspelt), 'response_format.json_schema.schema.properties.a.type'],
    [
      'chat tool parameters',
      chatRequestSchema,
      chat({ tools: [{ type: 'function', function: { name: 'f', parameters: misspelt } }] }),
      'tools[0].function.parameters.properties.a.type',
    ],
    [
      'responses text.format',
      responsesRequestSchema,
      responses({ text: { format: { type: 'json_schema', name: 's', schema: misspelt } } }),
      'text.format.schema.properties.a.type',
    ],
    [
      'responses tool parameters',
      responsesRequestSchema,
      responses({ tools: [{ type: 'function', name: 'f', parameters: misspelt }] }),
      'tools[0].parameters.properties.a.type',
    ],
  ])('%s', (_label, schema, body, param) => {
    const err = refusal(schema, body);
    expect(err).toMatchObject({ type: 'invalid_request_error', status: 400, param });
    expect(err.message).toBe(
      `Invalid '${param}': 'strng' is not a JSON Schema type: use string, number, integer, boolean, object, array or null, or an array of these`,
    );
  });

  test.each([
    ['at the root', { type: 'dict' }, ['type']],
    ['in a type array', { type: ['string', 'nul'] }, ['type', 1]],
    ['not a name', { type: 5 }, ['type']],
    ['under items', { type: 'array', items: { type: 'str' } }, ['items', 'type']],
    ['in a tuple (draft 7 items, 2020-12 prefixItems)', { type: 'array', items: [{ type: 'string' }, { type: 'x' }] }, ['items', 1, 'type']],
    ['in a prefixItems entry', { type: 'array', prefixItems: [{ type: 'x' }] }, ['prefixItems', 0, 'type']],
    ['in a union', { anyOf: [{ type: 'string' }, { type: 'text' }] }, ['anyOf', 1, 'type']],
    ['in $defs', { $defs: { node: { type: 'obj' } } }, ['$defs', 'node', 'type']],
    ['in definitions', { definitions: { node: { type: 'obj' } } }, ['definitions', 'node', 'type']],
    ['in additionalProperties', { type: 'object', additionalProperties: { type: 'any' } }, ['additionalProperties', 'type']],
    [
      'deep down',
      { properties: { a: { properties: { b: { items: { properties: { c: { type: 'float' } } } } } } } },
      ['properties', 'a', 'properties', 'b', 'items', 'properties', 'c', 'type'],
    ],
    ['the first in reading order', { properties: { a: { type: 'one' }, b: { type: 'two' } } }, ['properties', 'a', 'type']],
  ])('%s', (_label, schema, path) => {
    expect(unknownSchemaType(schema as Record<string, unknown>)?.path).toEqual(path);
  });
});

test('every JSON Schema type, alone or in arrays, is taken; data and names that say "type" are not read as schemas', () => {
  const schema = {
    type: 'object',
    properties: {
      s: { type: 'string' },
      n: { type: ['number', 'null'] },
      i: { type: 'integer' },
      b: { type: 'boolean' },
      a: { type: 'array', items: { type: 'object', properties: {}, additionalProperties: false } },
      z: { type: 'null' },
      // A property named `type` is a name; its schema is what is checked.
      type: { type: 'string', enum: ['a', 'b'] },
      // Values, not schemas: whatever their `type` says.
      e: { enum: [{ type: 'anything' }] },
      c: { const: { type: 'anything' } },
      d: { type: 'object', default: { type: 'anything' }, examples: [{ type: 'anything' }] },
      r: { $ref: '#/$defs/node' },
    },
    $defs: { node: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    required: ['s'],
  };
  expect(unknownSchemaType(schema)).toBeUndefined();
  expect(() => parseInput(chatRequestSchema, withSchema(schema))).not.toThrow();
  expect(() => parseInput(responsesRequestSchema, responses({ tools: [{ type: 'function', name: 'f', parameters: schema }] }))).not.toThrow();
});

test('a schema nested thousands deep is walked without recursion', () => {
  let schema: Record<string, unknown> = { type: 'strng' };
  for (let i = 0; i < 20_000; i++) schema = { type: 'object', properties: { a: schema } };
  expect(unknownSchemaType(schema)?.path).toHaveLength(20_000 * 2 + 1);
});
