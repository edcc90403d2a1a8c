import { Fifo } from './fifo';

/**
 * A line of passes through a `TurnGate`, served in its own order. Each WebSocket has one for
 * its messages, so a socket with thousands waiting is served a pass per round like any other.
 */
export class Lane {
  /** @internal Resolvers of the passes waiting, oldest first. */
  readonly passes = new Fifo<() => void>();
  /** @internal In the gate's round (at most once). */
  queued = false;
  /** @internal Dropped: its waiting passes are gone and later ones never come. */
  dropped = false;

  /** Passes of this lane waiting for a later turn. */
  get length(): number {
    return this.passes.length;
  }
}

/**
 * Admits at most `perTurn` units of work per event-loop turn, the rest in later turns. Thousands
 * of sockets that connect or subscribe at the same moment (a reconnect after a deploy) arrive in
 * one poll phase; each check (credential, document, cost, starting the stream) is cheap, but
 * together they would hold the loop for seconds while /healthz waits. Through the gate the
 * checks run in slices with I/O between them.
 *
 * Waiting passes are served fairly across lanes: a turn takes one pass from each lane in turn
 * (round robin), so one lane's backlog delays another's next pass by at most one round. Within
 * a lane, and for passes made without one (a shared lane), the order is arrival order. When one
 * global line served everything in arrival order, one socket's 300,000 pings kept every other
 * socket's `connection_init` waiting past graphql-ws's 3 s timeout.
 */
export class TurnGate {
  /** Lanes with passes waiting, in the order they are served. */
  private readonly round = new Fifo<Lane>();
  private readonly shared = new Lane();
  private waiting = 0;
  private admitted = 0;
  private turnScheduled = false;

  /**
   * @param onBusy called when a pass has to wait and more lanes wait than one turn serves (a
   *   burst from many sockets, not one socket's backlog).
   */
  constructor(
    private readonly perTurn: number,
    private readonly onBusy?: () => void,
  ) {}

  /** Lanes with passes waiting for a later turn. */
  get waitingLanes(): number {
    return this.round.length;
  }

  /**
   * Resolves at once while this turn has room and nobody waits, otherwise in a later turn. A
   * pass of a dropped lane never resolves.
   */
  pass(lane: Lane = this.shared): Promise<void> {
    if (lane.dropped) return new Promise(() => undefined);
    this.scheduleTurn();
    if (this.waiting === 0 && this.admitted < this.perTurn) {
      this.admitted++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      lane.passes.push(resolve);
      this.waiting++;
      if (lane.queued) return;
      lane.queued = true;
      this.round.push(lane);
      if (this.round.length > this.perTurn) this.onBusy?.();
    });
  }

  /** Forgets the lane's waiting passes (its socket closed); its later passes never resolve. */
  drop(lane: Lane): void {
    if (lane.dropped) return;
    lane.dropped = true;
    this.waiting -= lane.passes.length;
    lane.passes.clear();
    // Its place in the round, if any, is skipped when reached.
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.turnScheduled = false;
    this.admitted = 0;
    // Their continuations run as microtasks right after this callback: the slice of this turn.
    while (this.admitted < this.perTurn) {
      const lane = this.round.shift();
      if (!lane) break;
      lane.queued = false;
      const resolve = lane.passes.shift();
      if (!resolve) continue;
      this.admitted++;
      this.waiting--;
      if (lane.passes.length > 0) {
        lane.queued = true;
        this.round.push(lane);
      }
      resolve();
    }
    if (this.round.length > 0) this.scheduleTurn();
  };
}
