/** Verifies an identity-provider ID token; throws authentication_error for any bad token. */
export interface IdentityVerifier {
  verify(idToken: string): Promise<{ issuer: string; subject: string }>;
}
