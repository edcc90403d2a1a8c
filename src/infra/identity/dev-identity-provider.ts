import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK, type KeyLike } from 'jose';
import type { IdentityVerifier, VerifiedIdentity } from '../../domain/ports/identity';
import type { Database } from '../../domain/ports/database';
import { verifyIdToken } from './verify-jwt';

export const DEV_ISSUER = 'urn:svc:dev-idp';
export const DEV_AUDIENCE = 'svc-gateway';
const SECRET_NAME = 'dev_idp_private_jwk';

/**
 * The built-in development identity provider, used when OIDC_ISSUER is unset (refused under
 * NODE_ENV=production by the config). Its ES256 key lives in the database so the demo ID token
 * printed at first start keeps working after a restart.
 */
export class DevIdentityProvider implements IdentityVerifier {
  private constructor(
    private readonly privateKey: KeyLike,
    private readonly publicKey: KeyLike,
  ) {}

  static async open(db: Database): Promise<DevIdentityProvider> {
    let row = await db.one<{ value: string }>(`select value from server_secrets where name = ?`, [SECRET_NAME]);
    if (!row) {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const jwk = JSON.stringify(await exportJWK(privateKey));
      await db.run(`insert into server_secrets (name, value) values (?, ?) on conflict do nothing`, [SECRET_NAME, jwk]);
      row = await db.one<{ value: string }>(`select value from server_secrets where name = ?`, [SECRET_NAME]);
    }
    const jwk = JSON.parse(row!.value) as JWK;
    const privateKey = (await importJWK(jwk, 'ES256')) as KeyLike;
    const { d: _d, ...publicJwk } = jwk;
    const publicKey = (await importJWK(publicJwk, 'ES256')) as KeyLike;
    return new DevIdentityProvider(privateKey, publicKey);
  }

  /** Mints an ID token for `subject` (the demo account, tests). */
  issue(subject: string, options: { expiresIn?: string | number; audience?: string; typ?: string } = {}): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'JWT' })
      .setIssuer(DEV_ISSUER)
      .setAudience(options.audience ?? DEV_AUDIENCE)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '30d')
      .sign(this.privateKey);
  }

  verify(idToken: string): Promise<VerifiedIdentity> {
    return verifyIdToken(idToken, this.publicKey, { issuer: DEV_ISSUER, audience: DEV_AUDIENCE });
  }
}
