/** The `Idempotency-Key` claims' side in the database, as the idempotency service uses it. */
import type { StoredResponse } from './idempotency-service';

/** A claim's name: the API key it is scoped to and the `Idempotency-Key` sent. */
export interface ClaimName {
  apiKeyId: string;
  key: string;
}

/** A claim asked for by a first request (or a retry of one), on behalf of `holder`, this instance. */
export interface ClaimRequest extends ClaimName {
  fingerprint: string;
  holder: string;
  /** The call id a new claim gets (a claim taken over keeps its own). */
  proposedCallId: string;
  /** How long a claim is remembered. */
  keepSeconds: number;
  /** A claim with no holder still running after this long died with its instance. */
  abandonedAfterSeconds: number;
  /** A claim whose holder stopped heartbeating it this long ago died with its instance. */
  graceSeconds: number;
}

/** A claim as it stands: the fingerprint of its request and, once its first request stored it, the response. */
export interface ClaimRecord {
  fingerprint: string;
  response: StoredResponse | null;
}

export interface IdempotencyRepository {
  /**
   * Claims the key when it is new, expired, released by the same request, or held by a first
   * request of the same fingerprint that died with its instance; answers the claim's call id, or
   * undefined when it is not free.
   */
  claim(request: ClaimRequest): Promise<string | undefined>;
  /** The claim as it stands, or undefined when there is none. */
  find(name: ClaimName): Promise<ClaimRecord | undefined>;
  /** Stores the first request's response, unless the claim is answered or no longer `holder`'s. */
  storeResponse(name: ClaimName, holder: string, response: StoredResponse): Promise<void>;
  /** Frees the claim for the same request's retry, as the same call, unless it is answered or no longer `holder`'s. */
  release(name: ClaimName, holder: string): Promise<void>;
  /** Says `holder` still runs those of the claims it holds that are not answered. */
  heartbeat(holder: string, claims: readonly ClaimName[]): Promise<void>;
  /** Deletes the claims past their time. */
  purgeExpired(): Promise<void>;
}
