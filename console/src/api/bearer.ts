/**
 * What a call is authorised with: a fixed string (a pasted API key, a development ID token) or a
 * token that is renewed while the page stays open (an OIDC sign-in). Views hold the same Bearer for
 * the whole sign-in, so a renewal changes no prop and re-runs no effect: the page keeps its state,
 * and each call reads the token of the moment.
 */
export type Bearer = string | TokenSource;

export interface TokenSource {
  /** The token now. */
  current(): string;
  /** The token to send: renewed first when it has expired (a tab that slept through its renewal). */
  fresh(): Promise<string>;
  /** The gateway refused `used`: answers the token to try once more, or null when that would not help. */
  refused(used: string): Promise<string | null>;
  /** Whether `refused(used)` may answer a token (known at once, for the WebSocket's retry decision). */
  mayRetry(used: string): boolean;
  /** Called with each renewed token; answers the function that stops listening. */
  onRenewed(listener: (token: string) => void): () => void;
}

export const tokenNow = (b: Bearer): string => (typeof b === 'string' ? b : b.current());
export const freshToken = (b: Bearer): Promise<string> => (typeof b === 'string' ? Promise.resolve(b) : b.fresh());
