import {
  GraphQLError,
  Kind,
  getOperationAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type ParseOptions,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { perDocument } from './per-document';
import { nestsDeeperThan } from './nesting-scan';

/**
 * Bounds on what one GraphQL document may ask, the same over HTTP and WebSocket. Each is refused
 * before execution, and the shape bounds before graphql-js's own validation: bracket nesting before
 * parsing, tokens while parsing (a 10,000-alias document never becomes an AST), then depth, aliases and field count in one
 * linear pass, then the standard rules (whose overlapping-fields check is quadratic in repeated
 * fields, hence the field bound), then the cost once variables are known.
 */
export const LIMITS = {
  /** Lexical tokens per document; a rich dashboard query is a few hundred. */
  maxTokens: 3000,
  /**
   * Bracket nesting in the text (selection sets, list and object literals, arguments), checked
   * before parsing: the parser recurses once per level (nesting-scan.ts).
   */
  maxNesting: 64,
  /** Selection depth; introspection (`__schema`, `__type`) is not counted, it is bounded by the schema. */
  maxDepth: 10,
  /** Aliased fields per document. */
  maxAliases: 30,
  /** Field selections written in the document (the whole schema has about a hundred fields). */
  maxFields: 300,
  /** Query cost: 1 per field, list connections weighted by page size (graphql-query-complexity). */
  maxCost: 2000,
  /** Fields the cost estimator may visit once fragments are expanded. */
  maxCostNodes: 5000,
  /** Active operations per WebSocket connection. */
  maxSubscriptionsPerConnection: 20,
  /** HTTP JSON body and WebSocket message size. */
  maxBodyBytes: 100 * 1024,
} as const;

export const PARSE_OPTIONS: ParseOptions = { maxTokens: LIMITS.maxTokens };

const limitError = (message: string) => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } } });

/** A document whose brackets nest past the bound, refused before the parser recurses into it. */
export function nestingError(text: string): GraphQLError | null {
  return nestsDeeperThan(text, LIMITS.maxNesting) ? limitError(`The document nests brackets more than ${LIMITS.maxNesting} levels deep.`) : null;
}

/**
 * Depth of the deepest operation (following fragment spreads), aliases and fields, in one pass.
 * A fragment's depth is computed once and remembered, so spreading the same fragment many times
 * costs nothing more to measure; a fragment cycle counts as nothing (NoFragmentCyclesRule reports it).
 */
export function measureDocument(doc: DocumentNode): { depth: number; aliases: number; fields: number } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const known = new Map<string, number>();
  const visiting = new Set<string>();

  const depthOf = (set: SelectionSetNode): number => {
    let deepest = 0;
    for (const s of set.selections) {
      let d: number;
      if (s.kind === Kind.FIELD) d = s.name.value.startsWith('__') ? 0 : 1 + (s.selectionSet ? depthOf(s.selectionSet) : 0);
      else if (s.kind === Kind.INLINE_FRAGMENT) d = depthOf(s.selectionSet);
      else d = fragmentDepth(s.name.value);
      if (d > deepest) deepest = d;
    }
    return deepest;
  };
  const fragmentDepth = (name: string): number => {
    const cached = known.get(name);
    if (cached !== undefined) return cached;
    const fragment = fragments.get(name);
    if (!fragment || visiting.has(name)) return 0;
    visiting.add(name);
    const d = depthOf(fragment.selectionSet);
    visiting.delete(name);
    known.set(name, d);
    return d;
  };

  let depth = 0;
  for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION) depth = Math.max(depth, depthOf(d.selectionSet));
  let aliases = 0;
  let fields = 0;
  visit(doc, {
    Field(node) {
      fields++;
      if (node.alias) aliases++;
    },
  });
  return { depth, aliases, fields };
}

/** The first shape bound the document breaks, or null. */
export function documentLimitError(doc: DocumentNode): GraphQLError | null {
  const m = measureDocument(doc);
  if (m.depth > LIMITS.maxDepth) return limitError(`The query is ${m.depth} levels deep; the limit is ${LIMITS.maxDepth}.`);
  if (m.aliases > LIMITS.maxAliases) return limitError(`The document has ${m.aliases} aliases; the limit is ${LIMITS.maxAliases}.`);
  if (m.fields > LIMITS.maxFields) return limitError(`The document selects ${m.fields} fields; the limit is ${LIMITS.maxFields}.`);
  return null;
}

/**
 * Measured costs by document and by operation and variables: thousands of clients subscribing
 * with one query after a reconnect walked the same document thousands of times (a third of that
 * burst's CPU in the bench).
 */
const measuredOf = perDocument(() => new Map<string, GraphQLError | null>());
const MEASURED_PER_DOCUMENT = 256;

/**
 * The operation's cost with its variables; an error to answer instead of executing, or null.
 * Variables that do not coerce are reported as Apollo would (BAD_USER_INPUT).
 */
export function costError(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
): GraphQLError | null {
  const byInput = measuredOf(document);
  const input = `${operationName ?? ''}\u0000${variables ? JSON.stringify(variables) : ''}`;
  const known = byInput.get(input);
  if (known !== undefined) return known;
  const result = measureCost(schema, document, variables, operationName);
  if (byInput.size >= MEASURED_PER_DOCUMENT) byInput.clear();
  byInput.set(input, result);
  return result;
}

function measureCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
): GraphQLError | null {
  // No such operation: execution answers that itself. A named one is measured alone.
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      operationName: operation.name?.value,
      maxQueryNodes: LIMITS.maxCostNodes,
      estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : 'The query could not be measured.';
    if (/maximum allowed number of nodes/.test(message)) return limitError(`The query selects too many fields; the limit is ${LIMITS.maxCostNodes}.`);
    return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
  }
  return cost > LIMITS.maxCost ? limitError(`The query costs ${cost}; the limit is ${LIMITS.maxCost}.`) : null;
}
