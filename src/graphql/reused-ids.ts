/**
 * A client may complete an operation and subscribe again with the same id at once (the protocol
 * allows an id again once the client completed it). graphql-ws (6.4) handles the `complete` by
 * ending the operation, but the operation's own handler finishes a few promise hops later: by
 * then a `subscribe` read in the same turn has registered the id again, and the old handler's
 * last steps tell the client `complete` for that id and delete the new operation's entry (so
 * the client's later `complete` could no longer end it).
 *
 * Here, per socket, a `subscribe` whose id names an operation the client completed and whose
 * handler is still running waits until that handler has finished, and the socket's later
 * messages wait behind it, so its messages keep their order. Everything else goes through at
 * once; only messages that mention `subscribe` or `complete` are parsed here.
 */

/** A message event's arguments, as `ws` emits them (the data, whether it is binary). */
export type MessageArgs = unknown[];

interface Running {
  /** Settles when graphql-ws's handler of the `subscribe` message has finished. */
  done: Promise<void>;
  /** The client sent `complete` for it: a `subscribe` with its id waits for `done`. */
  completed: boolean;
}

export class ReusedIds {
  /** By id: operations started by this socket's `subscribe` messages whose handlers still run. */
  private readonly running = new Map<string, Running>();
  /** Messages waiting (in order) behind a held `subscribe`; null when nothing waits. */
  private held: MessageArgs[] | null = null;

  /**
   * @param deliver hands a message to graphql-ws; answers what its listeners returned (the
   *   handler's promise, which for a `subscribe` settles when the operation has ended).
   * @param open whether the socket is still open (held messages of a closed socket are dropped).
   */
  constructor(
    private readonly deliver: (args: MessageArgs) => unknown,
    private readonly open: () => boolean,
  ) {}

  /** Messages waiting behind a held `subscribe` (they count toward the socket's bound, message-turns.ts). */
  get holding(): number {
    return this.held?.length ?? 0;
  }

  push(args: MessageArgs): void {
    if (this.held) {
      this.held.push(args);
      return;
    }
    this.dispatch(args);
  }

  private dispatch(args: MessageArgs): void {
    const data = args[0];
    const message = mentions(data, 'subscribe') || mentions(data, 'complete') ? typeAndId(data) : null;
    const previous = message ? this.running.get(message.id) : undefined;
    if (message?.type === 'subscribe' && previous?.completed) {
      this.held = [args];
      void previous.done.then(() => this.release());
      return;
    }
    if (message?.type === 'complete' && previous) previous.completed = true;
    const handled = this.deliver(args);
    // A second `subscribe` with a running id is refused by graphql-ws, which closes the socket.
    if (message?.type === 'subscribe' && !previous) {
      const entry: Running = { done: settled(handled), completed: false };
      this.running.set(message.id, entry);
      void entry.done.then(() => {
        if (this.running.get(message.id) === entry) this.running.delete(message.id);
      });
    }
  }

  /** The held `subscribe` and what queued behind it go on, until one of them is held again. */
  private release(): void {
    const queued = this.held ?? [];
    this.held = null;
    if (!this.open()) return;
    // By index, not shift(): shifting each out of a long queue would be O(n²).
    for (let i = 0; i < queued.length; i++) {
      this.dispatch(queued[i]);
      if (this.held) {
        for (let j = i + 1; j < queued.length; j++) (this.held as MessageArgs[]).push(queued[j]);
        return;
      }
    }
  }
}

function mentions(data: unknown, word: string): boolean {
  return (typeof data === 'string' || Buffer.isBuffer(data)) && data.includes(word);
}

/** The message's type and id when it is an object with a string id; null otherwise (graphql-ws answers what is malformed). */
function typeAndId(data: unknown): { type: unknown; id: string } | null {
  try {
    const parsed = JSON.parse(String(data)) as { type?: unknown; id?: unknown } | null;
    return parsed !== null && typeof parsed === 'object' && typeof parsed.id === 'string' ? { type: parsed.type, id: parsed.id } : null;
  } catch {
    return null;
  }
}

/** A promise that settles (never rejects) when `value` does, or at once for a plain value. */
function settled(value: unknown): Promise<void> {
  return Promise.resolve(value).then(
    () => undefined,
    () => undefined,
  );
}
