/**
 * Admits at most `perTurn` units of work per event-loop turn, the rest in later turns in arrival
 * order. Thousands of sockets that connect or subscribe at the same moment (a reconnect after a
 * deploy) arrive in one poll phase; each check (credential, document, cost, starting the stream)
 * is cheap, but together they would hold the loop for seconds while /healthz waits. Through the
 * gate the checks run in slices with I/O between them.
 */
export class TurnGate {
  private readonly waiting: Array<() => void> = [];
  private admitted = 0;
  private turnScheduled = false;

  /** @param onQueue called whenever a pass has to wait for a later turn (the turn's share is used). */
  constructor(
    private readonly perTurn: number,
    private readonly onQueue?: () => void,
  ) {}

  /** Passes waiting for a later turn. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Resolves at once while this turn has room and nobody waits, otherwise in a later turn. */
  pass(): Promise<void> {
    this.scheduleTurn();
    if (this.waiting.length === 0 && this.admitted < this.perTurn) {
      this.admitted++;
      return Promise.resolve();
    }
    this.onQueue?.();
    return new Promise((resolve) => this.waiting.push(resolve));
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
    while (this.waiting.length > 0 && this.admitted < this.perTurn) {
      this.admitted++;
      this.waiting.shift()!();
    }
    if (this.waiting.length > 0) this.scheduleTurn();
  };
}
