import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { GraphQLContext } from './context';
import { deliverDirectly, type DeliveryTarget } from './direct-delivery';
import { perDocument } from './per-document';

type Result = ExecutionResult | Promise<ExecutionResult>;

/**
 * graphql-ws's `subscribe`, executing each event once for all the subscriptions that would
 * compute the same answer: the same event object (the bus hands one object to every listener),
 * the same parsed document (document-checks.ts shares it between operations with the same
 * text), operation name, variables and principal. graphql-js's own `subscribe` executes the
 * selection for every subscriber, which is most of the JavaScript an event costs when thousands
 * watch one account; the answer is a plain value that nothing mutates (graphql-ws serialises it,
 * onNext formats errors into a new object), so handing the same one to all of them is safe. The
 * principal is part of the key so a resolver that ever reads the caller still answers per caller.
 *
 * An operation whose socket was named by `deliverTo` has its answers written there directly
 * (direct-delivery.ts); without one, the answers are the stream's values, as graphql-js gives them.
 */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const key = operationKey(args);
  const answer = (event: unknown) => executeOnce(args, key, event);
  const target = targets.get(args);
  return target ? deliverDirectly(source[Symbol.asyncIterator](), answer, target) : mapEvents(source[Symbol.asyncIterator](), answer);
}

const targets = new WeakMap<ExecutionArgs, DeliveryTarget>();

/** The socket and operation id the answers of the operation started with `args` are written to. */
export function deliverTo(args: ExecutionArgs, target: DeliveryTarget): void {
  targets.set(args, target);
}

/** event → operation key → its answer. Entries go when the event object does. */
const answers = new WeakMap<object, Map<string, Result>>();
let nextDocumentId = 0;
const documentId = perDocument(() => nextDocumentId++);

function operationKey(args: ExecutionArgs): string {
  const doc = documentId(args.document);
  const principal = (args.contextValue as GraphQLContext | undefined)?.principal;
  const who = !principal
    ? '-'
    : principal.kind === 'key'
      ? `key:${principal.keyId}`
      : principal.kind === 'account'
        ? `account:${principal.accountId}`
        : 'operator';
  return `${doc}\n${args.operationName ?? ''}\n${who}\n${JSON.stringify(args.variableValues ?? {})}`;
}

function executeOnce(args: ExecutionArgs, key: string, event: unknown): Result {
  if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
  let byKey = answers.get(event);
  if (!byKey) answers.set(event, (byKey = new Map<string, Result>()));
  let answer = byKey.get(key);
  if (!answer) {
    byKey.set(key, (answer = execute({ ...args, rootValue: event })));
    // Once an asynchronous execution is done, the later subscribers take its value without a hop.
    if (answer instanceof Promise)
      answer.then(
        (value) => byKey.set(key, value),
        () => undefined,
      );
  }
  return answer;
}

/** The source's events mapped to answers; ending the mapped stream ends the source (a stream unsubscribes from the bus). */
function mapEvents<T>(source: AsyncIterator<T>, map: (event: T) => Result): AsyncGenerator<ExecutionResult> {
  const answer = async (r: IteratorResult<T>): Promise<IteratorResult<ExecutionResult>> => {
    if (r.done) return { value: undefined, done: true };
    try {
      return { value: await map(r.value), done: false };
    } catch (err) {
      await source.return?.();
      throw err;
    }
  };
  const done = (): Promise<IteratorResult<ExecutionResult>> => Promise.resolve({ value: undefined, done: true });
  const mapped = {
    next: () => source.next().then(answer),
    return: () => (source.return ? source.return().then(answer) : done()),
    throw: (err?: unknown) => (source.throw ? source.throw(err).then(answer) : Promise.reject(err instanceof Error ? err : new Error(String(err)))),
    [Symbol.asyncIterator]: () => mapped,
  };
  // What graphql-ws needs of a generator (next, return, Symbol.asyncIterator); no more is used.
  return mapped;
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof (Object(value) as Partial<AsyncIterable<T>>)[Symbol.asyncIterator] === 'function';
}
