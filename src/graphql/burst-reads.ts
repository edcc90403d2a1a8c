/**
 * Spreads a burst of socket reads over many event-loop turns. When thousands of clients send at
 * the same moment (every subscriber of a page re-subscribing, a reconnect storm), libuv reads
 * every ready socket in one poll phase before any timer or other request runs: the bench measured
 * 9,000 WebSocket messages read in one turn and the loop held for 360 ms, each read (the syscall,
 * node's stream, ws's frame parsing) ~30 µs even with the messages' handling deferred by the turn
 * gate. JavaScript cannot split a poll phase, but it can take sockets out of it: once more
 * sockets have messages waiting than a turn serves, every tracked socket stops reading (libuv
 * skips the events it had already collected for them), and they read again a slice per turn,
 * with I/O in between. A paused socket keeps its data in the kernel's buffer; nothing is lost or
 * reordered.
 *
 * It is the number of sockets waiting that counts, not of messages: one socket's flood is its
 * own lane's backlog (bounded, message-turns.ts) and must not stop everyone else reading: a
 * socket with 300,000 pings queued would keep every other socket unread until they were all
 * handled, and new clients would be closed for not sending `connection_init` in time.
 */
import type { Socket } from 'node:net';

/**
 * The libuv stream behind a net.Socket. `reading` and readStop/readStart are what node's own
 * `Socket.pause()` uses in its `onread` mode; a plain socket's `pause()` only stops its stream
 * flowing while libuv keeps reading into the buffer, which is the cost to avoid here.
 */
interface StreamHandle {
  reading?: boolean;
  readStop?: () => number;
  readStart?: () => number;
}

const handleOf = (socket: Socket): StreamHandle | undefined => (socket as unknown as { _handle?: StreamHandle | null })._handle ?? undefined;

/** Stops libuv reading the socket; false when it was not reading (node paused it for backpressure, or it is gone). */
function stopReading(socket: Socket): boolean {
  const handle = handleOf(socket);
  if (socket.destroyed || !handle?.reading || typeof handle.readStop !== 'function') return false;
  handle.reading = false;
  if (handle.readStop() !== 0) {
    handle.reading = true;
    return false;
  }
  return true;
}

/** Reads again, as node's own tryReadStart does; a socket node started meanwhile is left alone. */
function startReading(socket: Socket): void {
  const handle = handleOf(socket);
  if (socket.destroyed || !handle || handle.reading || typeof handle.readStart !== 'function') return;
  handle.reading = true;
  if (handle.readStart() !== 0) socket.destroy();
}

export class BurstReads {
  private readonly open = new Set<Socket>();
  /** Paused by the burst under way (none: no burst), put back oldest first. */
  private readonly paused: Socket[] = [];

  /**
   * @param perTurn sockets put back to reading per turn.
   * @param backlog sockets whose messages still wait for their turn; paused sockets wait while it is over `perTurn`.
   * @param onPause told each time a burst paused sockets (a metric).
   */
  constructor(
    private readonly perTurn: number,
    private readonly backlog: () => number,
    private readonly onPause: () => void = () => undefined,
  ) {}

  track(socket: Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  /** Sockets paused now and not yet reading again. */
  get pausedCount(): number {
    return this.paused.length;
  }

  /** More sockets wait than a turn serves: every socket stops reading, to come back in slices. */
  pauseAll(): void {
    if (this.paused.length > 0) return;
    for (const socket of this.open) if (stopReading(socket)) this.paused.push(socket);
    if (this.paused.length === 0) return;
    this.onPause();
    setImmediate(this.resumeSlice);
  }

  private readonly resumeSlice = (): void => {
    if (this.backlog() <= this.perTurn) {
      for (const socket of this.paused.splice(0, this.perTurn)) startReading(socket);
    }
    if (this.paused.length > 0) setImmediate(this.resumeSlice);
  };
}
