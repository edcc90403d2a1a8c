import type { KeyPrincipal } from './principal';

/** Turns a bearer API key into its principal; both front doors use the same instance. */
export interface KeyAuthenticator {
  authenticate(secret: string): Promise<KeyPrincipal>;
}
