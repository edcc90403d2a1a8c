/**
 * GraphQL arguments and variables carrying text the database cannot store (NUL, unpaired
 * surrogates) are refused before execution, as REST refuses them: an invalid_request_error
 * naming the argument as the schema spells it (`after`, `input.prompt`, `ids[2]`), whether the
 * text is written in the document or passed in a variable. One check for HTTP and WebSocket.
 * Every name here is the client's own (an argument, an input field, a variable), so a refusal
 * writes it as it is.
 */
import { GraphQLError, Kind, visit, type DocumentNode, type ValueNode } from 'graphql';
import { DomainError, invalidField, invalidRequest } from '../domain/errors/domain-error';
import { asWritten, type PathSegment } from '../domain/errors/field-path';
import { assertStorableText, hasUnstorableText } from '../domain/shared/validate';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../infra/http/json-depth';
import { asGraphQLError } from './errors';
import { perDocument } from './per-document';

type Path = PathSegment[];

const unstorable = (path: Path) => invalidField(path, 'text must not contain NUL characters or unpaired UTF-16 surrogates.');

/**
 * One pass over the document's argument values (fields' and directives', in every operation and
 * fragment, in document order): where each variable is first passed (the argument path it fills),
 * and the first literal string that cannot be stored.
 */
function scanArguments(document: DocumentNode): { uses: Map<string, Path>; literal: Path | null } {
  const uses = new Map<string, Path>();
  let literal: Path | null = null;
  const walk = (value: ValueNode, path: Path): void => {
    switch (value.kind) {
      case Kind.VARIABLE:
        if (!uses.has(value.name.value)) uses.set(value.name.value, path);
        return;
      case Kind.STRING:
        if (!literal && hasUnstorableText(value.value)) literal = path;
        return;
      case Kind.LIST:
        value.values.forEach((v, i) => walk(v, [...path, i]));
        return;
      case Kind.OBJECT:
        for (const field of value.fields) walk(field.value, [...path, asWritten(field.name.value)]);
        return;
      default:
        return;
    }
  };
  const defaults: Array<{ name: string; value: ValueNode }> = [];
  visit(document, {
    Argument(node) {
      walk(node.value, [asWritten(node.name.value)]);
      // Its value is walked above; nothing inside an argument is another argument.
      return false;
    },
    VariableDefinition(node) {
      if (node.defaultValue) defaults.push({ name: node.variable.name.value, value: node.defaultValue });
      return false;
    },
  });
  // A default value fills the arguments its variable is passed to.
  for (const { name, value } of defaults) if (!literal) walk(value, uses.get(name) ?? [asWritten(name)]);
  return { uses, literal };
}

/** 10,000 clients subscribing with one query walked its tree 10,000 times (an eighth of the gateway's CPU in that burst). */
const scanOnce = perDocument(scanArguments);

export function unstorableArgumentError(document: DocumentNode, variables: Record<string, unknown> | null | undefined): GraphQLError | null {
  const { uses, literal } = scanOnce(document);
  try {
    // First, as a REST body is: every later walk of the variables (the cost's cache key, their
    // coercion) recurses, and 5,000 levels of [[[…]]] overflowed the stack into a 500.
    if (jsonDepthExceeds(variables)) {
      throw invalidRequest(`The variables nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`, [asWritten('variables')], 'body_too_deep');
    }
    for (const [name, value] of Object.entries(variables ?? {})) {
      if (hasUnstorableText(name)) throw invalidRequest('Variable names must not contain NUL characters or unpaired UTF-16 surrogates.');
      // A variable the document never passes is named as itself.
      assertStorableText(value, uses.get(name) ?? [asWritten(name)], 'written');
    }
    if (literal) throw unstorable(literal);
  } catch (err) {
    if (err instanceof DomainError) return asGraphQLError(err, 400);
    throw err;
  }
  return null;
}
