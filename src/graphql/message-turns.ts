/**
 * Bounds how many WebSocket messages are handled per event-loop turn, the rest in later turns.
 * When thousands of sockets send at the same moment (every client subscribing after a
 * reconnect), libuv reads every ready socket in one poll phase, and graphql-ws handled each
 * message inside its read (JSON, validation, starting the operation: ~30 µs): the bench's 10,000
 * subscribes held the loop for 330 ms while /healthz waited. Through a turn gate of its own, a
 * read only queues its message once the turn's share is used, and the queue is worked through
 * in slices with I/O between them.
 *
 * Each socket queues in a lane of its own, served round robin (turn-gate.ts): a socket's
 * messages keep their order, and one socket's backlog delays another's next message by one
 * round at most. A socket may have at most `MAX_WAITING_MESSAGES` messages (or
 * `MAX_WAITING_BYTES`) waiting; past that it is closed with 1008 and its queue dropped, as is
 * the queue of a socket closed for any other reason. A `subscribe` reusing the id of an
 * operation the client just completed waits for that operation's end (reused-ids.ts); what
 * waits behind it counts toward the bound too.
 */
import type { WebSocket } from 'ws';
import { TurnGate, Lane } from './turn-gate';
import { ReusedIds, type MessageArgs } from './reused-ids';

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/**
 * Messages one socket may have waiting for their turn. The queue forms only while the
 * instance is busier than a turn's share (64): a client that sends its 20 operations and a few
 * pings at once is far below it, and a client past it is flooding (one 64 KiB read of minimal
 * frames is ~3,000 messages).
 */
export const MAX_WAITING_MESSAGES = 1_000;
/** Bytes of messages one socket may have waiting: forty of the largest (100 kB), twice a connection's 20 operations. */
export const MAX_WAITING_BYTES = 4 * 1024 * 1024;

/**
 * RFC 6455's "policy violation": the client broke a rule of this server, not of the protocol.
 * graphql-ws's clients do not reconnect after it (nor after any 1xxx code but 1000/1001/1005/
 * 1006/1012–1014). graphql-ws's own 4429 means a second `connection_init`, so it is not reused.
 */
export const FLOODED = 1008;
export const FLOODED_REASON = `Too many messages waiting: at most ${MAX_WAITING_MESSAGES} (${MAX_WAITING_BYTES / 1024 / 1024} MiB) at once`;

/** A message's bytes: `ws` hands the door a Buffer (its binaryType is left 'nodebuffer'). */
const sizeOf = (data: unknown): number => (Buffer.isBuffer(data) ? data.length : typeof data === 'string' ? Buffer.byteLength(data) : 0);

/**
 * Routes a socket's 'message' events through `gate` (call it before anyone listens to them).
 * @param onFlooded told when the socket is closed for its backlog (before the close).
 */
export function messagesThroughGate(gate: TurnGate, socket: WebSocket, onFlooded?: (waiting: { messages: number; bytes: number }) => void): void {
  const emit = socket.emit.bind(socket) as Emit;
  const isOpen = () => socket.readyState === socket.OPEN;
  // The listeners are called here rather than through emit, so that the handler's promise is seen.
  const deliver = (args: MessageArgs) => {
    const results = socket.rawListeners('message').map((listener) => (listener as (...a: unknown[]) => unknown).apply(socket, args));
    return results.length === 1 ? results[0] : Promise.all(results);
  };
  const ids = new ReusedIds(deliver, isOpen);
  const lane = new Lane();
  let waitingBytes = 0;
  socket.once('close', () => gate.drop(lane));

  socket.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== 'message') return emit(event, ...args);
    // Once the socket is closing, what it still sends is read (up to its close frame) and dropped.
    if (!isOpen()) return true;
    const before = lane.length;
    const passed = gate.pass(lane);
    // Admitted at once, or queued behind this lane's others (then it counts until its turn).
    const size = lane.length > before ? sizeOf(args[0]) : 0;
    waitingBytes += size;
    const waiting = lane.length + ids.holding;
    if (waiting > MAX_WAITING_MESSAGES || waitingBytes > MAX_WAITING_BYTES) {
      gate.drop(lane);
      onFlooded?.({ messages: waiting, bytes: waitingBytes });
      socket.close(FLOODED, FLOODED_REASON);
      return true;
    }
    void passed.then(() => {
      waitingBytes -= size;
      if (isOpen()) ids.push(args);
      else gate.drop(lane);
    });
    return true;
  }) as WebSocket['emit'];
}
