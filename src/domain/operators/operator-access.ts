import { createHash, timingSafeEqual } from 'node:crypto';
import { notFound, permissionDenied, unauthenticated } from '../errors/domain-error';
import type { IdentityVerifier } from '../ports/identity';

/** Who did an operator action, as the audit log names it: the shared ADMIN_TOKEN, or an identity's subject. */
export type OperatorActor = 'token' | `sub:${string}`;

/** A caller holding ADMIN_TOKEN: operator powers only (it is nobody's account). */
export interface OperatorPrincipal {
  kind: 'operator';
  actor: 'token';
}

/** A key has a recognisable shape; an operator credential is the token or an ID token. */
const KEY_SHAPE = /^svc_(live|test)_/;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Who is an operator, decided here once for both doors: the holder of ADMIN_TOKEN (compared in
 * constant time, over digests so the length of the token tells nothing), or an ID token whose
 * subject is listed in ADMIN_SUBJECTS. A valid ID token of anyone else is known but not allowed:
 * permission_denied, not an authentication failure.
 */
export class OperatorAccess {
  private readonly tokenDigest: Buffer | null;
  private readonly subjects: ReadonlySet<string>;

  constructor(
    settings: { adminToken?: string; subjects: readonly string[] },
    private readonly identity: IdentityVerifier,
  ) {
    this.tokenDigest = settings.adminToken ? digest(settings.adminToken) : null;
    this.subjects = new Set(settings.subjects);
  }

  /** Without ADMIN_TOKEN and ADMIN_SUBJECTS nobody is an operator, and /admin does not exist. */
  get enabled(): boolean {
    return this.tokenDigest !== null || this.subjects.size > 0;
  }

  isAdminToken(token: string): boolean {
    return this.tokenDigest !== null && timingSafeEqual(digest(token), this.tokenDigest);
  }

  /** The actor an identity's subject acts as, or null when it is nobody's operator. */
  actorOfSubject(subject: string): `sub:${string}` | null {
    return this.subjects.has(subject) ? `sub:${subject}` : null;
  }

  /**
   * The operator behind a bearer token (REST's /admin): the token, or a listed subject's ID token.
   * An ID token that fails verification (or an API key) is a 401; a valid one of an unlisted
   * subject is permission_denied.
   */
  async authenticate(token: string | null, route: string): Promise<OperatorActor> {
    if (!this.enabled) throw notFound(`Unknown route ${route}.`, 'route_not_found');
    if (!token) throw unauthenticated('Missing or malformed Authorization header; expected "Bearer <ADMIN_TOKEN or an operator\'s ID token>".');
    if (this.isAdminToken(token)) return 'token';
    // As /account says of a key sent there: the wrong kind of credential, not an unknown one.
    if (KEY_SHAPE.test(token)) throw unauthenticated("This endpoint takes ADMIN_TOKEN or an operator's ID token, not an API key.");
    const who = await this.identity.verify(token);
    const actor = this.actorOfSubject(who.subject);
    if (!actor) throw permissionDenied();
    return actor;
  }
}
