/**
 * What the OpenAPI test reads besides exchanges: the document's own structure (no OpenAPI
 * validator package is installed, so OpenAPI 3.1's rules that the tests lean on are checked here,
 * and every schema is compiled by Ajv in strict mode), and the routes an Express app registers.
 */
import { HTTP_METHODS, metaSchemaProblem, openApi, resolved, validatorOf, type Json } from './openapi-schemas';

const PATH_ITEM_FIELDS = new Set(['summary', 'description', 'parameters', 'servers', ...HTTP_METHODS]);
const STATUS_KEY = /^([1-5]\d\d|[1-5]XX|default)$/;

/** Every `$ref` anywhere in the document, with where it is. */
function refsOf(node: unknown, at: string, out: Array<[string, string]> = []): Array<[string, string]> {
  if (Array.isArray(node)) node.forEach((n, i) => refsOf(n, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push([at, value]);
      else refsOf(value, `${at}/${key}`, out);
    }
  }
  return out;
}

/** The schemas an operation carries inline: its parameters', its bodies' and its headers'. */
function schemasOf(op: Json, pathItem: Json): Json[] {
  const schemas: Json[] = [];
  for (const p of [...(pathItem.parameters ?? []), ...(op.parameters ?? [])].map(resolved)) if (p.schema) schemas.push(p.schema);
  for (const c of Object.values((op.requestBody ? resolved(op.requestBody).content : {}) ?? {})) if ((c as Json).schema) schemas.push((c as Json).schema);
  for (const r of Object.values((op.responses ?? {}) as Json).map(resolved)) {
    for (const c of Object.values((r.content ?? {}) as Json)) schemas.push(...[c.schema, c['x-sse-data']].filter(Boolean));
    for (const h of Object.values((r.headers ?? {}) as Json).map(resolved)) if (h.schema) schemas.push(h.schema);
  }
  return schemas;
}

/** What breaks OpenAPI 3.1's rules in the document, or a schema Ajv refuses; empty when none. */
export function documentProblems(): string[] {
  const { doc } = openApi();
  const problems: string[] = [];
  if (!/^3\.1\.\d+$/.test(String(doc.openapi))) problems.push(`openapi is ${String(doc.openapi)}, not 3.1.x`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string') problems.push('info needs a title and a version');
  for (const [at, ref] of refsOf(doc, '#')) {
    try {
      resolved({ $ref: ref });
    } catch {
      problems.push(`${at}: $ref ${ref} names nothing`);
    }
  }
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
  const tags = new Set((doc.tags ?? []).map((t: Json) => t.name));
  const ids = new Set<string>();
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    if (!template.startsWith('/')) problems.push(`${template}: a path starts with /`);
    for (const key of Object.keys(item)) if (!PATH_ITEM_FIELDS.has(key)) problems.push(`${template}: ${key} is not a path item field`);
    const inTemplate = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      const op = item[method] as Json;
      const where = `${method.toUpperCase()} ${template}`;
      if (typeof op.operationId !== 'string' || ids.has(op.operationId)) problems.push(`${where}: operationId missing or not unique`);
      ids.add(op.operationId);
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolved);
      for (const p of params)
        if (!['query', 'header', 'path', 'cookie'].includes(p.in) || typeof p.name !== 'string') problems.push(`${where}: a bad parameter`);
      const declared = params.filter((p) => p.in === 'path');
      if (declared.some((p) => p.required !== true)) problems.push(`${where}: path parameters are required`);
      const names = declared.map((p) => p.name as string).sort();
      if (names.join() !== inTemplate.join()) problems.push(`${where}: path parameters ${names.join()} do not match the template's ${inTemplate.join()}`);
      const responses = Object.entries((op.responses ?? {}) as Json);
      if (responses.length === 0) problems.push(`${where}: no responses`);
      for (const [status, r] of responses) {
        if (!STATUS_KEY.test(status)) problems.push(`${where}: ${status} is not a status`);
        if (typeof resolved(r as Json).description !== 'string') problems.push(`${where} ${status}: a response needs a description`);
      }
      for (const requirement of (op.security ?? doc.security ?? []) as Json[]) {
        for (const name of Object.keys(requirement)) if (!schemes.has(name)) problems.push(`${where}: security scheme ${name} is not defined`);
      }
      for (const tag of op.tags ?? []) if (!tags.has(tag)) problems.push(`${where}: tag ${tag} is not declared`);
      for (const schema of schemasOf(op, item)) {
        const problem = schemaCompileProblem(schema);
        if (problem) problems.push(`${where}: ${problem}`);
      }
    }
  }
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Json)) {
    const problem = schemaCompileProblem(schema);
    if (problem) problems.push(`components.schemas.${name}: ${problem}`);
  }
  return problems;
}

/** What keeps `schema` from being a valid JSON Schema 2020-12 schema that Ajv compiles strictly, or null. */
function schemaCompileProblem(schema: Json): string | null {
  const invalid = metaSchemaProblem(schema);
  if (invalid) return invalid;
  try {
    validatorOf(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The documented operations, as `METHOD template`. */
export function documentedOperations(): Array<{ method: string; template: string; id: string; succeeds: boolean }> {
  return Object.entries(openApi().doc.paths as Json).flatMap(([template, item]) =>
    HTTP_METHODS.filter((m) => item[m]).map((method) => ({
      method,
      template,
      id: String(item[method].operationId),
      succeeds: Object.keys(item[method].responses).some((status) => /^[23]/.test(status)),
    })),
  );
}

interface Layer {
  route?: { path: string | RegExp; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
}

/** What an Express app answers: its routes (method and path, with the mounts they sit under) and the paths where middleware is mounted. */
export function registeredRoutes(app: unknown): { routes: Array<{ method: string; path: string | RegExp }>; mounts: string[] } {
  const routes: Array<{ method: string; path: string | RegExp }> = [];
  const mounts: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      const raw = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      if (layer.route) {
        const { path, methods } = layer.route;
        for (const method of Object.keys(methods).filter((m) => m !== '_all')) routes.push({ method, path: typeof path === 'string' ? prefix + path : path });
      } else if (layer.handle?.stack) walk(layer.handle.stack, prefix + raw);
      else if (raw) mounts.push(prefix + raw);
    }
  };
  walk((app as { router: { stack: Layer[] } }).router.stack, '');
  return { routes, mounts: [...new Set(mounts)] };
}

/** A path template with its parameters' names left out, so Express's `/a/:id` and OpenAPI's `/a/{key_id}` compare equal. */
export const shapeOf = (template: string) => template.replace(/:[A-Za-z_]\w*/g, '{}').replace(/\{[^}]+\}/g, '{}');
