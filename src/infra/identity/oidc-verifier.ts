import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type { IdentityVerifier, VerifiedIdentity } from '../../domain/ports/identity';
import { upstreamError } from '../../domain/errors/domain-error';
import { verifyIdToken } from './verify-jwt';

/**
 * A real OIDC provider: the JWKS comes from OIDC_JWKS_URL or, when unset, from the issuer's
 * discovery document (fetched once, lazily, so start-up does not depend on the provider).
 */
export class OidcVerifier implements IdentityVerifier {
  private jwks?: Promise<JWTVerifyGetKey>;

  constructor(private readonly options: { issuer: string; audience?: string; jwksUrl?: string; clockToleranceSeconds?: number }) {}

  private keys(): Promise<JWTVerifyGetKey> {
    this.jwks ??= this.discoverJwksUrl().then((url) => createRemoteJWKSet(new URL(url)));
    this.jwks.catch(() => (this.jwks = undefined));
    return this.jwks;
  }

  private async discoverJwksUrl(): Promise<string> {
    if (this.options.jwksUrl) return this.options.jwksUrl;
    const url = `${this.options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(5000), redirect: 'error' });
    if (!res.ok) throw upstreamError('The identity provider could not be reached.');
    const doc = (await res.json()) as { jwks_uri?: string };
    if (typeof doc.jwks_uri !== 'string') throw upstreamError('The identity provider has no JWKS.');
    return doc.jwks_uri;
  }

  async verify(idToken: string): Promise<VerifiedIdentity> {
    return verifyIdToken(idToken, await this.keys(), this.options);
  }
}
