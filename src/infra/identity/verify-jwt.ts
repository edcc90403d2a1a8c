import { errors, jwtVerify, type JWTVerifyGetKey, type KeyLike } from 'jose';
import { unauthenticated } from '../../domain/errors/domain-error';
import type { VerifiedIdentity } from '../../domain/ports/identity';

/** Asymmetric algorithms only: `none` and shared-secret HS* tokens are refused outright. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Seconds of disagreement between the issuer's clock and ours that a token's `exp` is allowed, unless the issuer's configuration says otherwise. */
const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * A `typ` header, when present, must say JWT: an access token (`at+jwt`), a logout token or any
 * other token type the issuer signs with the same keys is not an ID token.
 */
function isJwtType(typ: unknown): boolean {
  return typ === undefined || (typeof typ === 'string' && /^(application\/)?jwt$/i.test(typ));
}

/** Signature, issuer, audience, expiry and algorithm checked; every failure is the same 401. */
export async function verifyIdToken(
  token: string,
  key: JWTVerifyGetKey | KeyLike | Uint8Array,
  expected: { issuer: string; audience?: string; clockToleranceSeconds?: number },
): Promise<VerifiedIdentity> {
  const tolerance = expected.clockToleranceSeconds ?? CLOCK_TOLERANCE_SECONDS;
  if (token.length > 8192 || !JWT_SHAPE.test(token)) throw unauthenticated('Invalid ID token.');
  try {
    const { payload, protectedHeader } = await jwtVerify(token, key as JWTVerifyGetKey, {
      issuer: expected.issuer,
      audience: expected.audience,
      algorithms: ACCEPTED_ALGORITHMS,
      requiredClaims: ['sub', 'exp'],
      clockTolerance: tolerance,
    });
    if (!isJwtType(protectedHeader.typ)) throw unauthenticated('Invalid ID token.');
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255) {
      throw unauthenticated('Invalid ID token.');
    }
    return { issuer: expected.issuer, subject: payload.sub, usableUntil: (payload.exp! + tolerance) * 1000 };
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw unauthenticated('The ID token has expired.');
    throw unauthenticated('Invalid ID token.');
  }
}
