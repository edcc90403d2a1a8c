/**
 * Bounds how many WebSocket messages are handled per event-loop turn, the rest in later turns in
 * arrival order. When thousands of sockets send at the same moment (every client subscribing
 * after a reconnect), libuv reads every ready socket in one poll phase, and graphql-ws handled
 * each message inside its read (JSON, validation, starting the operation: ~30 µs): the bench's
 * 10,000 subscribes held the loop for 330 ms while /healthz waited. Through this, a read only
 * queues its message once the turn's share is used, and the queue is worked through in slices
 * with I/O between them. Under light load a message is handled at once, as before. A socket's
 * messages keep their order; those of a socket closed meanwhile are dropped.
 */
import type { WebSocket } from 'ws';

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

export class MessageTurns {
  private readonly queue: Array<{ socket: WebSocket; emit: Emit; args: unknown[] }> = [];
  private head = 0;
  private handled = 0;
  private turnScheduled = false;

  constructor(private readonly perTurn: number) {}

  /** Routes the socket's 'message' events through the turns (before anyone listens to them). */
  attach(socket: WebSocket): void {
    const emit = socket.emit.bind(socket) as Emit;
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event !== 'message') return emit(event, ...args);
      this.scheduleTurn();
      if (this.head === this.queue.length && this.handled < this.perTurn) {
        this.handled++;
        return emit(event, ...args);
      }
      this.queue.push({ socket, emit, args });
      return true;
    }) as WebSocket['emit'];
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.turnScheduled = false;
    this.handled = 0;
    while (this.head < this.queue.length && this.handled < this.perTurn) {
      const { socket, emit, args } = this.queue[this.head]!;
      this.queue[this.head++] = undefined as never;
      this.handled++;
      if (socket.readyState === socket.OPEN) emit('message', ...args);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else {
      // An index instead of shift(): a long queue is not moved for every message taken.
      if (this.head > 4096) this.head = (this.queue.splice(0, this.head), 0);
      this.scheduleTurn();
    }
  };
}
