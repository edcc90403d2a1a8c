/**
 * Subscription answers written to their WebSocket by the door itself, each event's answer
 * serialised once for all the subscriptions that share it.
 *
 * graphql-ws delivers an event to each subscription through its own `emit.next`: an async hop,
 * the answer copied into a message, `JSON.stringify` of the whole message, a Promise around
 * `ws.send` awaited before the next event. When one job event goes to a thousand sockets, that
 * is a thousand serialisations of the same answer and about as much JavaScript again, on one
 * event-loop thread, ahead of the last subscriber's frame. Here the `next` frame is the cached
 * payload text between a per-subscription prefix and `}`, byte for byte what graphql-ws writes
 * (`{"id":…,"type":"next","payload":…}`), and `ws.send` is called directly.
 *
 * graphql-ws still owns the protocol: the handshake, `subscribe` and `complete` messages, and
 * the operation's lifetime. The stream it is handed never yields an answer; it settles once
 * the subscription ends (the source ended: graphql-ws sends `complete`), fails (it sends
 * `error`), or is ended by graphql-ws (`return`: a client `complete`, or the socket closed).
 *
 * A reader that falls behind no longer holds events back (graphql-ws waited for each write):
 * what it has not read waits in the socket, and past `MAX_UNSENT_BYTES` for each operation on
 * the socket the subscription that would add more ends with an error, as a JobStream whose
 * buffer fills does (the kernel's send buffer, a few MB, comes before this bound).
 */
import type { ExecutionResult, FormattedExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';
import { DomainError } from '../domain/errors/domain-error';

/**
 * Unsent bytes a socket may hold, per operation running on it (~100 job events each), before
 * the subscription that would add more ends.
 */
export const MAX_UNSENT_BYTES = 128 * 1024;

export interface DeliveryTarget {
  /** The operation id the client chose (graphql-ws checked it). */
  id: string;
  socket: Pick<WebSocket, 'readyState' | 'bufferedAmount' | 'send'>;
  /** An answer with errors, formatted as the door's onNext formats them. */
  formatErrors: (result: ExecutionResult) => FormattedExecutionResult;
  /** Operations running on the socket: they share its bound on unsent bytes. */
  operationsOnSocket?: () => number;
}

type Answer = ExecutionResult | Promise<ExecutionResult>;

const OPEN = 1;
const DONE: IteratorResult<ExecutionResult> = { value: undefined, done: true };

/** An answer's payload text, once per answer object (answers are shared and never mutated). */
const payloads = new WeakMap<ExecutionResult, string>();

function payloadText(result: ExecutionResult): string {
  let text = payloads.get(result);
  if (text === undefined) payloads.set(result, (text = JSON.stringify(result)));
  return text;
}

/**
 * Reads `source` and writes each event's answer to the target's socket; answers graphql-ws's
 * stream, which settles when the subscription ends.
 */
export function deliverDirectly<T>(source: AsyncIterator<T>, answer: (event: T) => Answer, target: DeliveryTarget): AsyncGenerator<ExecutionResult> {
  const prefix = `{"id":${JSON.stringify(target.id)},"type":"next","payload":`;
  let stopped = false;
  let started = false;
  let settle!: (r: IteratorResult<ExecutionResult>) => void;
  let fail!: (err: unknown) => void;
  const ended = new Promise<IteratorResult<ExecutionResult>>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const write = (result: ExecutionResult): boolean => {
    const { socket } = target;
    if (socket.readyState !== OPEN) return false;
    // The operations are counted only once one operation's share is past (rarely: a slow reader).
    if (socket.bufferedAmount > MAX_UNSENT_BYTES && socket.bufferedAmount > MAX_UNSENT_BYTES * (target.operationsOnSocket?.() ?? 1)) {
      throw new DomainError('service_unavailable', 'This subscription fell too far behind its events; subscribe again.');
    }
    const payload = result.errors ? JSON.stringify(target.formatErrors(result)) : payloadText(result);
    socket.send(prefix + payload + '}');
    return true;
  };

  const run = async (): Promise<void> => {
    try {
      for (;;) {
        const next = await source.next();
        if (next.done || stopped) break;
        const pending = answer(next.value);
        // Only the first subscriber of an event waits for its execution; the rest find it done.
        const result = pending instanceof Promise ? await pending : pending;
        if (stopped) break;
        if (!write(result)) {
          // The socket closed: leave the bus now rather than when graphql-ws notices.
          await source.return?.();
          break;
        }
      }
      settle(DONE);
    } catch (err) {
      await source.return?.();
      fail(err);
    }
  };

  const stop = async (): Promise<IteratorResult<ExecutionResult>> => {
    stopped = true;
    await source.return?.();
    settle(DONE);
    return DONE;
  };
  const stream = {
    next: (): Promise<IteratorResult<ExecutionResult>> => {
      if (!started) {
        started = true;
        void run();
      }
      return ended;
    },
    return: stop,
    throw: async (err?: unknown) => {
      await stop();
      throw err;
    },
    [Symbol.asyncIterator]: () => stream,
  };
  // What graphql-ws needs of a generator (next, return, Symbol.asyncIterator); no more is used.
  return stream;
}
