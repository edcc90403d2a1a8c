import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

/**
 * The root fields an operation selects, by response key (alias or name), through inline
 * fragments and fragment spreads: graphql-js executes one root field per response key (fields
 * that share a key are merged into one execution), so this is what the operation will run. A
 * fragment cycle is walked once (NoFragmentCyclesRule reports it).
 */
function rootFieldNames(operation: OperationDefinitionNode, document: DocumentNode): Map<string, string[]> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const byKey = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        byKey.set(key, [...(byKey.get(key) ?? []), s.name.value]);
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return byKey;
}

/**
 * The response keys of the root fields that do work: `__typename` (and `__schema`, `__type`)
 * only read the schema, whatever alias they are given.
 */
export function workingRootFields(operation: OperationDefinitionNode, document: DocumentNode): string[] {
  return [...rootFieldNames(operation, document)].filter(([, names]) => names.some((n) => !n.startsWith('__'))).map(([key]) => key);
}

export const ONE_MUTATION_FIELD = 'A mutation operation may select one field; send each mutation in its own request.';

/**
 * A mutation operation selects one field (besides `__typename`). Every mutation's result type is
 * non-null (CONTRACT), so when a later field of several fails, graphql-js nulls the whole `data`:
 * an earlier field's charge went through while its job id, or a new key's secret shown once,
 * never reached the client. Refused as validation, before anything runs, on both doors.
 */
export function OneMutationFieldRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation !== OperationTypeNode.MUTATION) return false;
      if (workingRootFields(node, context.getDocument()).length > 1) context.reportError(new GraphQLError(ONE_MUTATION_FIELD, { nodes: node }));
      return false;
    },
  };
}
