/**
 * A WebSocket lives as long as the credential it was opened with. A socket opened with an ID
 * token is closed (4403) when the token expires. A socket opened with an API key is checked
 * again when the key changes anywhere (revoked, narrowed, rotated, given another expiry: the
 * key-change feed tells every instance) and when its secret stops being usable (the key's
 * expiry, or the end of the grace of a secret a rotation replaced); one whose secret no longer
 * holds is closed with 4403 and the reason, which ends its subscriptions. After a gap in the
 * feed (changes may have been missed) every key socket is checked again.
 */
import type { WebSocket } from 'ws';
import { DomainError } from '../domain/errors/domain-error';
import type { Clock, TimerHandle } from '../domain/ports/clock';
import type { KeyPrincipal } from '../domain/keys/principal';
import type { Logger } from '../infra/observability/logger';
import { authenticateBearer, type GraphQLServices } from './context';
import { closeRefused, FORBIDDEN, refusesCredential } from './connection-refusal';

/** setTimeout's ceiling, about 24.8 days: a later moment is waited for in steps. */
const LONGEST_WAIT_MS = 2 ** 31 - 1;

/** Runs `work` once `clock` reaches `until` (epoch ms); answers the cancel. */
function atMoment(clock: Clock, until: number, work: () => void): () => void {
  let timer: TimerHandle | undefined;
  const arm = () => {
    const wait = Math.min(Math.max(0, until - clock.now()), LONGEST_WAIT_MS);
    timer = clock.setTimeout(() => (clock.now() >= until ? work() : arm()), wait).unref();
  };
  arm();
  return () => clock.clearTimeout(timer);
}

/** A socket opened with an ID token is closed at the token's expiry (and the leeway verification allows). */
export function closeWhenTokenExpires(socket: WebSocket, usableUntil: number, clock: Clock): void {
  const cancel = atMoment(clock, usableUntil, () => socket.close(FORBIDDEN, 'Forbidden: the ID token has expired'));
  socket.once('close', cancel);
}

interface KeySocket {
  token: string;
  socket: WebSocket;
  /** Cancels the check armed for the moment the socket's secret stops being usable. */
  cancel?: () => void;
}

/** The sockets opened with each API key, checked again when their key changes or their secret's time is up. */
export class KeySockets {
  private readonly byKey = new Map<string, Set<KeySocket>>();

  constructor(
    private readonly services: GraphQLServices,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    services.keyChanges.subscribe((keyId) => void this.recheck(keyId));
    services.keyChanges.onGap(() => {
      if (services.keyChanges.live) for (const keyId of [...this.byKey.keys()]) void this.recheck(keyId);
    });
  }

  add(principal: KeyPrincipal, token: string, socket: WebSocket): void {
    const { keyId } = principal;
    const entry: KeySocket = { token, socket };
    let set = this.byKey.get(keyId);
    if (!set) this.byKey.set(keyId, (set = new Set()));
    set.add(entry);
    this.arm(keyId, entry, principal.usableUntil);
    socket.once('close', () => {
      entry.cancel?.();
      set.delete(entry);
      if (set.size === 0 && this.byKey.get(keyId) === set) this.byKey.delete(keyId);
    });
  }

  private arm(keyId: string, entry: KeySocket, usableUntil: number | undefined): void {
    entry.cancel?.();
    entry.cancel = usableUntil === undefined ? undefined : atMoment(this.clock, usableUntil, () => void this.recheck(keyId));
  }

  /** Each secret the key's sockets were opened with (a rotation leaves two) is checked once. */
  private async recheck(keyId: string): Promise<void> {
    const set = this.byKey.get(keyId);
    if (!set || set.size === 0) return;
    const byToken = new Map<string, KeySocket[]>();
    for (const entry of set) byToken.set(entry.token, [...(byToken.get(entry.token) ?? []), entry]);
    await Promise.all([...byToken].map(([token, entries]) => this.recheckSecret(keyId, token, entries)));
  }

  private async recheckSecret(keyId: string, token: string, entries: KeySocket[]): Promise<void> {
    try {
      const principal = await authenticateBearer(token, this.services);
      for (const entry of entries) this.arm(keyId, entry, principal.kind === 'key' ? principal.usableUntil : undefined);
    } catch (err) {
      // A check that could not be made (the database away) is no verdict on the key: its sockets stay.
      if (!(err instanceof DomainError) || !refusesCredential(err)) return this.logger.warn({ err, keyId }, 'key re-check failed; sockets kept');
      for (const { socket } of entries) closeRefused(socket, err);
    }
  }
}
