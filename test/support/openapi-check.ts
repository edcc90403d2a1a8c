/**
 * Checks HTTP exchanges against docs/openapi.yaml: the operation (method and path template), the
 * request (path and query parameters, credential, body) and the response (status, headers,
 * content type, JSON body, each event of an event stream).
 *
 * A request the document does not allow may still be sent (tests send wrong bodies on purpose):
 * its answer must then be a documented error. A request the gateway answers 2xx or 3xx must be
 * one the document allows, and every answer must be one the document lists for the operation.
 */
import { findOperation, openApi, resolved, schemaProblem, type Json, type Operation } from './openapi-schemas';

export interface Exchange {
  method: string;
  /** The request target: the path and its query string. */
  target: string;
  requestHeaders: Record<string, string>;
  requestBody?: string;
  status: number;
  responseHeaders: Headers;
  responseBody: string;
}

export interface CheckOptions {
  /**
   * For a request sent to break the rules (an unknown path, a hostile body): the request is not
   * judged, only the answer, which must be an error: a documented one or, on a path the document
   * does not have, one in the shared error body.
   */
  unchecked?: boolean;
}

/** A parameter's or header's text read as its schema's type says (OpenAPI's simple and form styles). */
function fromText(text: string, schema: Json): unknown {
  const s = resolved(schema);
  const types = ([] as unknown[]).concat(s.type ?? []);
  if (types.includes('integer') && /^-?(0|[1-9]\d*)$/.test(text)) return Number(text);
  if (types.includes('number') && /^-?\d+(\.\d+)?(e-?\d+)?$/i.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

function mediaTypeOf(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

function contentFor(content: Json, media: string): Json | undefined {
  return content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
}

const isJson = (media: string) => media === 'application/json' || media.endsWith('+json');

function requestProblems(op: Operation, pathParams: Record<string, string>, ex: Exchange, query: URLSearchParams): string[] {
  const problems: string[] = [];
  const declared = [...(op.pathItem.parameters ?? []), ...(op.spec.parameters ?? [])].map(resolved);
  const header = (name: string) => Object.entries(ex.requestHeaders).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  for (const p of declared) {
    const where = `${p.in} parameter '${p.name}'`;
    if (p.in === 'path') {
      const problem = schemaProblem(p.schema, fromText(pathParams[p.name] ?? '', p.schema), where);
      if (problem) problems.push(problem);
    } else if (p.in === 'query') {
      const values = query.getAll(p.name);
      if (values.length === 0) {
        if (p.required) problems.push(`${where} is required`);
        continue;
      }
      const s = resolved(p.schema);
      if (s.type === 'array') {
        const problem = schemaProblem(
          p.schema,
          values.map((v) => fromText(v, s.items ?? {})),
          where,
        );
        if (problem) problems.push(problem);
      } else if (values.length > 1) problems.push(`${where} is given ${values.length} times`);
      else {
        const problem = schemaProblem(p.schema, fromText(values[0], p.schema), where);
        if (problem) problems.push(problem);
      }
    } else if (p.in === 'header') {
      const value = header(p.name);
      if (value === undefined) {
        if (p.required) problems.push(`${where} is required`);
      } else {
        const problem = schemaProblem(p.schema, fromText(value, p.schema), where);
        if (problem) problems.push(problem);
      }
    }
  }
  const known = new Set(declared.filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of new Set(query.keys())) if (!known.has(name)) problems.push(`query parameter '${name}' is not documented`);

  const security = (op.spec.security ?? openApi().doc.security ?? []) as Json[];
  if (security.length > 0 && !security.some((s) => Object.keys(s).length === 0) && header('authorization') === undefined) {
    problems.push('no Authorization header, which the operation requires');
  }

  const body = ex.requestBody ?? '';
  if (!op.spec.requestBody) {
    if (body !== '') problems.push('a request body, which the operation does not take');
    return problems;
  }
  const requestBody = resolved(op.spec.requestBody);
  if (body === '') {
    if (requestBody.required) problems.push('no request body, which the operation requires');
    return problems;
  }
  const media = mediaTypeOf(header('content-type'));
  const content = contentFor(requestBody.content ?? {}, media);
  if (!content) problems.push(`request Content-Type '${media}' is not one of ${Object.keys(requestBody.content ?? {}).join(', ')}`);
  else if (isJson(media)) {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      problems.push('the request body is not JSON');
      return problems;
    }
    const problem = content.schema ? schemaProblem(content.schema, value, 'request body') : null;
    if (problem) problems.push(problem);
  } else if (media === 'application/x-www-form-urlencoded' && content.schema) {
    const problem = schemaProblem(content.schema, Object.fromEntries(new URLSearchParams(body)), 'request body');
    if (problem) problems.push(problem);
  }
  return problems;
}

function responseProblems(op: Operation, ex: Exchange): string[] {
  const responses = op.spec.responses as Json;
  const documented = responses[String(ex.status)] ?? responses[`${Math.floor(ex.status / 100)}XX`] ?? responses.default;
  if (!documented) return [`status ${ex.status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
  const response = resolved(documented);
  const problems: string[] = [];
  for (const [name, ref] of Object.entries((response.headers ?? {}) as Json)) {
    const h = resolved(ref as Json);
    const value = ex.responseHeaders.get(name);
    if (value === null) {
      if (h.required) problems.push(`response header '${name}' is missing`);
      continue;
    }
    const problem = h.schema ? schemaProblem(h.schema, fromText(value, h.schema), `response header '${name}: ${value.slice(0, 80)}'`) : null;
    if (problem) problems.push(problem);
  }
  if (ex.method.toLowerCase() === 'head') return problems;
  if (!response.content) {
    if (ex.responseBody !== '') problems.push('a response body, which is not documented for this status');
    return problems;
  }
  const media = mediaTypeOf(ex.responseHeaders.get('content-type'));
  const content = contentFor(response.content, media);
  if (!content) return [...problems, `response Content-Type '${media}' is not one of ${Object.keys(response.content).join(', ')}`];
  if (isJson(media) && content.schema) {
    let value: unknown;
    try {
      value = JSON.parse(ex.responseBody);
    } catch {
      return [...problems, 'the response body is not JSON'];
    }
    const problem = schemaProblem(content.schema, value, 'response body');
    if (problem) problems.push(problem);
  }
  if (media === 'text/event-stream' && content['x-sse-data']) problems.push(...eventProblems(ex.responseBody, content['x-sse-data'] as Json));
  return problems;
}

/** Each server-sent event's `data` against the media type's `x-sse-data` schema (OpenAPI 3.1 has no keyword for it). */
function eventProblems(body: string, schema: Json): string[] {
  const problems: string[] = [];
  body.split(/\r?\n\r?\n/).forEach((block, i) => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '' || data === '[DONE]') return;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      problems.push(`event ${i}: its data is not JSON`);
      return;
    }
    const problem = schemaProblem(schema, value, `event ${i}`);
    if (problem) problems.push(problem);
  });
  return problems;
}

/**
 * Throws, naming the operation and what disagrees, when the exchange is not one the document
 * describes; answers the operation it was (none for an unchecked request to an unknown path).
 */
export function checkExchange(ex: Exchange, options: CheckOptions = {}): Operation | undefined {
  const url = new URL(ex.target, 'http://gateway');
  const found = findOperation(ex.method, url.pathname);
  const exchange = `${ex.method.toUpperCase()} ${url.pathname} → ${ex.status}`;
  if (!found) {
    if (!options.unchecked) throw new Error(`OpenAPI: ${exchange}: no operation ${ex.method.toUpperCase()} ${url.pathname} is documented`);
    // A path the document does not have: its answer is still an error in the shared body.
    let body: unknown;
    try {
      body = JSON.parse(ex.responseBody);
    } catch {
      body = ex.responseBody;
    }
    const problem =
      ex.status < 400 ? `an undocumented path answered ${ex.status}` : schemaProblem(openApi().doc.components.schemas.Error, body, 'response body');
    if (problem) throw new Error(`OpenAPI: ${exchange}: ${problem}`);
    return undefined;
  }
  const { op, params } = found;
  const where = `OpenAPI operation ${op.id} (${op.method.toUpperCase()} ${op.template}), ${exchange}`;
  const answer = options.unchecked && ex.status < 400 ? [`a request sent unchecked was answered ${ex.status}, not an error`] : responseProblems(op, ex);
  if (answer.length > 0) throw new Error(`${where}: the response disagrees with the document: ${answer.join('; ')}`);
  if (options.unchecked || ex.status >= 400) return op;
  const asked = requestProblems(op, params, ex, url.searchParams);
  if (asked.length > 0) throw new Error(`${where}: the request is not one the document allows, yet it succeeded: ${asked.join('; ')}`);
  return op;
}
