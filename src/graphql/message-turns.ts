/**
 * Bounds how many WebSocket messages are handled per event-loop turn, the rest in later turns in
 * arrival order. When thousands of sockets send at the same moment (every client subscribing
 * after a reconnect), libuv reads every ready socket in one poll phase, and graphql-ws handled
 * each message inside its read (JSON, validation, starting the operation: ~30 µs): the bench's
 * 10,000 subscribes held the loop for 330 ms while /healthz waited. Through a turn gate of its
 * own, a read only queues its message once the turn's share is used, and the queue is worked
 * through in slices with I/O between them. A socket's messages keep their order; those of a
 * socket closed meanwhile are dropped. A `subscribe` reusing the id of an operation the client
 * just completed waits for that operation's end (reused-ids.ts).
 */
import type { WebSocket } from 'ws';
import { TurnGate } from './turn-gate';
import { ReusedIds, type MessageArgs } from './reused-ids';

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/** Routes a socket's 'message' events through `gate` (call it before anyone listens to them). */
export function messagesThroughGate(gate: TurnGate, socket: WebSocket): void {
  const emit = socket.emit.bind(socket) as Emit;
  const isOpen = () => socket.readyState === socket.OPEN;
  // The listeners are called here rather than through emit, so that the handler's promise is seen.
  const deliver = (args: MessageArgs) => {
    const results = socket.rawListeners('message').map((listener) => (listener as (...a: unknown[]) => unknown).apply(socket, args));
    return results.length === 1 ? results[0] : Promise.all(results);
  };
  const ids = new ReusedIds(deliver, isOpen);
  socket.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== 'message') return emit(event, ...args);
    void gate.pass().then(() => isOpen() && ids.push(args));
    return true;
  }) as WebSocket['emit'];
}
