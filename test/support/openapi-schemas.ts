/**
 * docs/openapi.yaml as the tests read it: the parsed document (the one the gateway serves), its
 * `$ref`s followed, its schemas compiled by Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses it)
 * the first time each is needed, and the operation a method and path belong to. Parsed once per
 * test run (openapi-document.ts), read once per test worker.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadOpenApiDocument } from '../../src/rest/routes/openapi-routes';
import { parsedOpenApiDocument } from './openapi-document';

export type Json = Record<string, any>;

export interface Operation {
  id: string;
  method: string;
  template: string;
  spec: Json;
  pathItem: Json;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Where the components' schemas live inside Ajv: `#/components/schemas/X` is rewritten to `<SCHEMAS_ID>#/$defs/X`. */
const SCHEMAS_ID = 'https://svc-gateway.invalid/openapi-schemas';
const SCHEMA_REF = '#/components/schemas/';

interface Loaded {
  doc: Json;
  ajv: Ajv2020;
  paths: Array<{ template: string; item: Json; pattern: RegExp; names: string[] }>;
  compiled: WeakMap<object, ValidateFunction>;
}
let loaded: Loaded | undefined;

/** The parsed document (the same the gateway serves) and the compiler, made on first use. */
export function openApi(): Loaded {
  if (loaded) return loaded;
  const doc = ((parsedOpenApiDocument() as Json | undefined) ?? loadOpenApiDocument()) as Json;
  // Checked against the meta-schema once, by the document's own test (documentProblems), not by every file.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allowUnionTypes: true, allErrors: false, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: SCHEMAS_ID, $defs: withAjvRefs(doc.components?.schemas ?? {}) });
  const paths = Object.entries(doc.paths as Json).map(([template, item]) => {
    const names: string[] = [];
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const name = /^\{([^}]+)\}$/.exec(part)?.[1];
        if (!name) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(name);
        return '([^/]+)';
      })
      .join('');
    return { template, item: item as Json, pattern: new RegExp(`^${source}$`), names };
  });
  // A literal path wins over a template that also matches it (`/console/config.json` over `/console/{page}`).
  paths.sort((a, b) => a.names.length - b.names.length);
  loaded = { doc, ajv, paths, compiled: new WeakMap() };
  return loaded;
}

function withAjvRefs(node: unknown): any {
  if (Array.isArray(node)) return node.map(withAjvRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)
        ? `${SCHEMAS_ID}#/$defs/${value.slice(SCHEMA_REF.length)}`
        : withAjvRefs(value);
  }
  return out;
}

/** A `$ref` within the document (`#/components/responses/X`) followed to what it names. */
export function resolved(node: Json): Json {
  let at = node;
  for (let hops = 0; typeof at?.$ref === 'string' && hops < 10; hops++) {
    const pointer = (at.$ref as string).replace(/^#\//, '').split('/');
    at = pointer.reduce((n: Json, part) => n?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], openApi().doc);
    if (at === undefined) throw new Error(`OpenAPI: ${String(node.$ref)} names nothing`);
  }
  return at;
}

/** The schema's validator, compiled once. */
export function validatorOf(schema: Json): ValidateFunction {
  const { ajv, compiled } = openApi();
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(withAjvRefs(schema) as object);
    compiled.set(schema, validate);
  }
  return validate;
}

/** What the JSON Schema 2020-12 meta-schema finds wrong with `schema`, or null. */
export function metaSchemaProblem(schema: Json): string | null {
  const { ajv } = openApi();
  return ajv.validateSchema(withAjvRefs(schema)) ? null : ajv.errorsText(ajv.errors);
}

/** What is wrong with `value` against `schema` (the first few of Ajv's errors), or null. */
export function schemaProblem(schema: Json, value: unknown, what: string): string | null {
  const validate = validatorOf(schema);
  if (validate(value)) return null;
  const errors = (validate.errors ?? []).slice(0, 4) as ErrorObject[];
  return `${what}: ${errors.map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ')}`;
}

/** A path segment's text; an escape that is not UTF-8 (`%ED%A0%80`) stays as it was sent. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The operation of a method and path, and the path's parameters. */
export function findOperation(method: string, pathname: string): { op: Operation; params: Record<string, string> } | undefined {
  const verb = method.toLowerCase();
  for (const { template, item, pattern, names } of openApi().paths) {
    const m = pattern.exec(pathname);
    if (!m || !item[verb]) continue;
    const params = Object.fromEntries(names.map((name, i) => [name, decoded(m[i + 1])]));
    return { op: { id: String(item[verb].operationId), method: verb, template, spec: item[verb], pathItem: item }, params };
  }
  return undefined;
}
