/** How deeply a parsed JSON value nests, bounded the same way for every door (REST bodies, GraphQL variables). */

/**
 * Objects and arrays nested inside one another. No request of this API needs more than a few
 * levels (a JSON Schema in `response_format` or a tool's `parameters` perhaps a dozen); every
 * recursive walk after parsing (the idempotency fingerprint, the text checks, serialising the
 * upstream request, the simulator's sampler) is then safe from a stack overflow, whatever arrives.
 */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests objects/arrays deeper than `max`. An explicit stack: no recursion. */
export function jsonDepthExceeds(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    if (top.depth > max) return true;
    const children: unknown[] = Array.isArray(top.node) ? (top.node as unknown[]) : Object.values(top.node);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ node: child, depth: top.depth + 1 });
  }
  return false;
}
