import type { TokenSource } from '../api/bearer';

/** The provider answered the renewal with an OAuth error (invalid_grant: its session ended, the grant was revoked). */
export class RenewalRefused extends Error {}
/** Nothing to renew with (no refresh token, or the provider does not renew ID tokens): expiry signs out, as before. */
export class CannotRenew extends Error {}

const LEAD_MAX_MS = 60_000; // renew a quarter of the lifetime before expiry, at most a minute before
const CHECK_MS = 30_000; // a timer slept through (a suspended laptop) is noticed within this on the wall clock
const MIN_GAP_MS = 2_000; // never two renewals closer than this, whatever the provider's tokens say
const RETRY_MS = [5_000, 10_000, 20_000, 40_000, 60_000];

interface Timing {
  renewAt: number;
  expiresAt: number;
}

/** iat and exp of a JWT, unverified: only to time the renewal (the gateway verifies the token). */
function claims(jwt: string): { iat?: number; exp?: number } {
  try {
    const json = JSON.parse(atob(jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    return { iat: typeof json.iat === 'number' ? json.iat : undefined, exp: typeof json.exp === 'number' ? json.exp : undefined };
  } catch {
    return {};
  }
}

/**
 * Times on this browser's clock. The lifetime (exp − iat, both on the provider's clock) counted
 * from receipt is immune to skew between the two clocks; a token read back from storage was
 * received earlier, so its exp bounds it too.
 */
function timing(token: string, receivedAt: number, stored: boolean): Timing | null {
  const { iat, exp } = claims(token);
  if (exp === undefined) return null;
  const lifetime = Math.max(0, exp * 1000 - (iat !== undefined ? iat * 1000 : Date.now()));
  const expiresAt = stored ? Math.min(receivedAt + lifetime, exp * 1000) : receivedAt + lifetime;
  return { renewAt: expiresAt - Math.min(LEAD_MAX_MS, lifetime / 4), expiresAt };
}

/**
 * An OIDC sign-in's ID token, renewed before it expires with `refresh` (the refresh token grant,
 * oidc.ts) and again when the gateway refuses it. One renewal at a time; `renewed` hands each new
 * token over to be stored, `ended` says the provider refused to renew (the app signs out).
 */
export class RenewingToken implements TokenSource {
  private token: string;
  private times: Timing | null;
  private inFlight: Promise<string | null> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private scheduled = true;
  private stopped = false;
  private failures = 0;
  private retryAt = 0;
  private lastRenewal = 0;
  /** The last token renewed because the gateway refused its predecessor: refused too, renewing again would not help. */
  private fromRefusal: string | null = null;
  private readonly listeners = new Set<(token: string) => void>();

  constructor(
    token: string,
    private readonly refresh: () => Promise<string>,
    private readonly hooks: { renewed: (token: string) => void; ended: () => void },
  ) {
    this.token = token;
    this.times = timing(token, Date.now(), true);
  }

  current(): string {
    return this.token;
  }

  start(): void {
    this.tick();
  }

  /** No more renewals; settles once a renewal already out has come back (and been dropped). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  async fresh(): Promise<string> {
    const now = Date.now();
    if (!this.times || now < this.times.expiresAt || now - this.lastRenewal < MIN_GAP_MS) return this.token;
    return (await this.renew()) ?? this.token;
  }

  async refused(used: string): Promise<string | null> {
    if (used !== this.token) return this.token;
    if (!this.mayRetry(used)) return null;
    const fresh = await this.renew();
    if (fresh) this.fromRefusal = fresh;
    return fresh;
  }

  mayRetry(used: string): boolean {
    return used !== this.token || (!this.stopped && used !== this.fromRefusal);
  }

  onRenewed(listener: (token: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private renew(): Promise<string | null> {
    if (this.stopped) return Promise.resolve(null);
    this.inFlight ??= this.refresh()
      .then(
        (token) => this.took(token),
        (err: unknown) => this.failed(err),
      )
      .finally(() => {
        this.inFlight = null;
        this.tick();
      });
    return this.inFlight;
  }

  private took(token: string): string | null {
    // Signed out while the request was out: the new token is not wanted.
    if (this.stopped) return null;
    this.token = token;
    this.times = timing(token, Date.now(), false);
    this.failures = 0;
    this.retryAt = 0;
    this.lastRenewal = Date.now();
    this.hooks.renewed(token);
    for (const listener of this.listeners) listener(token);
    return token;
  }

  private failed(err: unknown): null {
    if (err instanceof RenewalRefused) {
      if (!this.stopped) {
        void this.stop();
        this.hooks.ended();
      }
    } else if (err instanceof CannotRenew) {
      this.scheduled = false;
    } else {
      // The provider out of reach, say: try again a little later, while the token still holds.
      this.retryAt = Date.now() + RETRY_MS[Math.min(this.failures++, RETRY_MS.length - 1)]!;
    }
    return null;
  }

  /** Renews when due, else waits (at most CHECK_MS at a time, re-reading the wall clock). */
  private tick(): void {
    clearTimeout(this.timer);
    if (this.stopped || !this.scheduled || !this.times || this.inFlight) return;
    const wait = Math.max(this.times.renewAt, this.retryAt, this.lastRenewal + MIN_GAP_MS) - Date.now();
    if (wait <= 0) void this.renew();
    else this.timer = setTimeout(() => this.tick(), Math.min(wait, CHECK_MS));
  }
}
