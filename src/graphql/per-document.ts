import type { DocumentNode } from 'graphql';

/**
 * `compute` once per parsed document, remembered until the document goes. The doors hand out one
 * parsed document per query text (`document-checks.ts`), so what depends only on the document
 * (its argument scan, its id, its measured costs) is worked out once however many operations
 * share it: thousands of clients subscribing with one query after a reconnect.
 */
export function perDocument<T>(compute: (document: DocumentNode) => T): (document: DocumentNode) => T {
  const known = new WeakMap<DocumentNode, T>();
  return (document) => {
    if (known.has(document)) return known.get(document)!;
    const value = compute(document);
    known.set(document, value);
    return value;
  };
}
