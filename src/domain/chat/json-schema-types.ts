/**
 * The `type` keywords of a caller's JSON Schema: `response_format.json_schema.schema` and a
 * tool's `function.parameters` in chat, `text.format.schema` and a tool's `parameters` in the
 * Responses API. OpenAI refuses a type JSON Schema does not have (`"strng"`); taken, it reached
 * a provider as a 400 the client read second-hand, and the simulator sampled it as text.
 */
import { z } from 'zod';

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
const KNOWN = new Set(TYPES);
const TYPE_LIST = `${TYPES.slice(0, -1).join(', ')} or ${TYPES[TYPES.length - 1]}`;

/**
 * Keywords whose value is a schema, a list of schemas, or a name → schema map (draft 4 to
 * 2020-12). Only these are walked: `enum`, `const`, `default` and `examples` hold values, whose
 * `type` key is data, and a property named `type` is a name.
 */
const SCHEMA_AT = new Set([
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const SCHEMAS_IN = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

type Path = (string | number)[];
/** Where a schema sits: its key under its parent. A path is built from these only for the error. */
type Place = { parent?: Place; key?: string | number };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function pathOf(place: Place): Path {
  const path: Path = [];
  for (let p: Place | undefined = place; p?.parent; p = p.parent) path.push(p.key!);
  return path.reverse();
}

/** The first unknown `type` in the schema, as a path below it and a message; undefined when all are known. */
export function unknownSchemaType(root: Record<string, unknown>): { path: Path; message: string } | undefined {
  // An explicit stack, not recursion: a schema is as deep as its body allows, and each node is
  // read once, so the walk is linear in what the client sent (and bounded by the body's limit),
  // like the other walks of a body.
  const stack: Array<{ schema: Record<string, unknown>; place: Place }> = [{ schema: root, place: {} }];
  const push = (child: unknown, place: Place) => {
    if (isObject(child)) stack.push({ schema: child, place });
  };
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { schema, place } = top;
    const type = schema.type;
    if (type !== undefined) {
      const names = Array.isArray(type) ? type : [type];
      const bad = names.findIndex((t) => typeof t !== 'string' || !KNOWN.has(t));
      if (bad >= 0) {
        const named: unknown = names[bad];
        const what = typeof named === 'string' ? `'${named.slice(0, 64)}' is not a JSON Schema type` : 'a type must be given by name';
        return { path: [...pathOf(place), 'type', ...(Array.isArray(type) ? [bad] : [])], message: `${what}: use ${TYPE_LIST}, or an array of these` };
      }
    }
    // Pushed in reverse, so that of several unknown types the first in reading order is named.
    for (const k of Object.keys(schema).reverse()) {
      const value = schema[k];
      const at: Place = { parent: place, key: k };
      if (SCHEMA_MAPS.has(k) && isObject(value)) {
        for (const name of Object.keys(value).reverse()) push(value[name], { parent: at, key: name });
      } else if (SCHEMAS_IN.has(k) && Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) push(value[i], { parent: at, key: i });
      } else if (SCHEMA_AT.has(k)) push(value, at);
    }
  }
  return undefined;
}

/** A JSON Schema object as a request field: any keywords, but every `type` one JSON Schema has. */
export const jsonSchemaObject = z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
  const found = unknownSchemaType(schema);
  if (found) ctx.addIssue({ code: 'custom', path: found.path, message: found.message });
});
