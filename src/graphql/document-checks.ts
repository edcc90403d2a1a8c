import { GraphQLError, NoSchemaIntrospectionCustomRule, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { PARSE_OPTIONS, documentLimitError, nestingError } from './limits';
import { OneMutationFieldRule } from './root-fields';
import { parseFailure } from './errors';

/** What a document's text alone decides: parsed or not, within the shape bounds or not, valid or not. */
export type CheckedDocument =
  { ok: false; errors: readonly GraphQLError[] } | { ok: true; document: DocumentNode; limitError: GraphQLError | null; invalid: readonly GraphQLError[] };

/** Documents kept; clients send the same few queries over and over. */
const MAX_ENTRIES = 500;
/** Longer texts are checked every time, so the cache holds at most MAX_ENTRIES × this. */
const MAX_CACHED_LENGTH = 8 * 1024;

/**
 * Parsing and validating a document costs ~0.1–0.5 ms, and thousands of sockets subscribing with
 * the same query (a reconnect after a deploy) would pay it each; the answer depends only on the
 * text (and the schema and rules, fixed per door), so it is kept, least recently used first out.
 * Checks that depend on variables (the cost, unstorable text) still run on every operation. The
 * parsed document is shared by the operations that use it, which also saves their memory.
 */
export function documentChecker(schema: GraphQLSchema, production: boolean): (text: string) => CheckedDocument {
  const rules = [...specifiedRules, OneMutationFieldRule, ...(production ? [NoSchemaIntrospectionCustomRule] : [])];
  const cache = new Map<string, CheckedDocument>();

  const check = (text: string): CheckedDocument => {
    const tooDeep = nestingError(text);
    if (tooDeep) return { ok: false, errors: [tooDeep] };
    let document: DocumentNode;
    try {
      document = parse(text, PARSE_OPTIONS);
    } catch (err) {
      return { ok: false, errors: [parseFailure(err)] };
    }
    const limitError = documentLimitError(document);
    // A document past the shape bounds is never validated (the overlapping-fields rule is quadratic).
    const invalid = limitError
      ? []
      : validate(schema, document, rules).map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
    return { ok: true, document, limitError, invalid };
  };

  return (text) => {
    if (text.length > MAX_CACHED_LENGTH) return check(text);
    const hit = cache.get(text);
    if (hit) {
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    const checked = check(text);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(text, checked);
    return checked;
  };
}
