/** Who an ID token names, and until when it may be used (epoch ms, its `exp` plus the clock leeway). */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  usableUntil: number;
}

/** Verifies an identity-provider ID token; throws authentication_error for any bad token. */
export interface IdentityVerifier {
  verify(idToken: string): Promise<VerifiedIdentity>;
}
