/**
 * An in-memory IdempotencyRepository: the `idempotency_keys` rows as the claim statement keeps
 * them, on a clock the test moves (`now`, epoch ms: the database's clock, which the claims' times
 * are read on). A claim is taken when the key is new or expired, or (by the same fingerprint, not
 * answered) released, held by no one past the abandonment, or not heartbeated past the grace;
 * a claim taken over keeps its call id unless it had expired.
 */
import type { StoredResponse } from '../../../src/domain/idempotency/idempotency-service';
import type { ClaimName, ClaimRecord, ClaimRequest, IdempotencyRepository } from '../../../src/domain/idempotency/idempotency-repository';

interface FakeClaim {
  fingerprint: string;
  response: StoredResponse | null;
  startedAt: number;
  expiresAt: number;
  holder: string | null;
  heartbeatAt: number | null;
  released: boolean;
  callId: string;
}

const nameOf = (c: ClaimName) => `${c.apiKeyId}\0${c.key}`;

export class FakeIdempotencyRepository implements IdempotencyRepository {
  readonly claims = new Map<string, FakeClaim>();

  constructor(readonly clock: { now: number } = { now: Date.parse('2026-03-01T12:00:00Z') }) {}

  async claim(request: ClaimRequest): Promise<string | undefined> {
    const now = this.clock.now;
    const id = nameOf(request);
    const held = this.claims.get(id);
    const expired = held !== undefined && held.expiresAt < now;
    const free =
      held === undefined ||
      expired ||
      (held.response === null &&
        held.fingerprint === request.fingerprint &&
        (held.released ||
          (held.holder === null && held.startedAt < now - request.abandonedAfterSeconds * 1000) ||
          (held.holder !== null && (held.heartbeatAt ?? 0) < now - request.graceSeconds * 1000)));
    if (!free) return undefined;
    const callId = held === undefined || expired ? request.proposedCallId : held.callId;
    this.claims.set(id, {
      fingerprint: request.fingerprint,
      response: null,
      startedAt: now,
      expiresAt: now + request.keepSeconds * 1000,
      holder: request.holder,
      heartbeatAt: now,
      released: false,
      callId,
    });
    return callId;
  }

  async find(name: ClaimName): Promise<ClaimRecord | undefined> {
    const claim = this.claims.get(nameOf(name));
    return claim && { fingerprint: claim.fingerprint, response: claim.response };
  }

  async storeResponse(name: ClaimName, holder: string, response: StoredResponse): Promise<void> {
    const claim = this.heldBy(name, holder);
    if (claim) claim.response = { ...response, body: Buffer.from(response.body) };
  }

  async release(name: ClaimName, holder: string): Promise<void> {
    const claim = this.heldBy(name, holder);
    if (!claim) return;
    claim.released = true;
    claim.holder = null;
    claim.heartbeatAt = null;
  }

  async heartbeat(holder: string, claims: readonly ClaimName[]): Promise<void> {
    for (const name of claims) {
      const claim = this.heldBy(name, holder);
      if (claim) claim.heartbeatAt = this.clock.now;
    }
  }

  async purgeExpired(): Promise<void> {
    for (const [id, claim] of this.claims) if (claim.expiresAt < this.clock.now) this.claims.delete(id);
  }

  /** The claim, while it is `holder`'s and not answered. */
  private heldBy(name: ClaimName, holder: string): FakeClaim | undefined {
    const claim = this.claims.get(nameOf(name));
    return claim && claim.response === null && claim.holder === holder ? claim : undefined;
  }
}
