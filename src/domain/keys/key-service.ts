import type { KeyCache } from './key-cache';
import type { KeyDirectory } from './key-directory';
import { KeyRefresher } from './key-refresher';
import { z } from 'zod';
import type { UrlGuard } from '../ports/url-guard';
import { DomainError, apiKeyExpired, databaseTooSlow, notFound, unauthenticated } from '../errors/domain-error';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { oneLineLabel, parseInput } from '../shared/validate';
import { newWebhookSecret, nothingToRegenerate, parseWebhookChange } from '../webhooks/webhook-change';
import { principalOf, type ApiKey } from './key-record';
import type { KeyChanges, KeyRepository } from './key-repository';
import { budgetChanges, budgetsField, dailySpendCapField } from './key-budgets';
import {
  NO_CREDENTIALS,
  credentialsOf,
  hashSecret,
  judgeSecret,
  keyIdOfSecret,
  newKeyId,
  newKeySecret,
  type KeyCredentials,
  type SecretVerdict,
} from './key-secrets';
import type { KeyPrincipal } from './principal';
import type { KeyExpiryNotices } from './key-expiry-notices';
import type { Clock } from '../ports/clock';
import { LastUsedWriter } from './last-used-writer';
import { systemClock } from '../shared/system-clock';

export const MAX_ACTIVE_KEYS = 10;
/** A rotation's grace: how long the replaced secret is still taken (seconds). */
const MAX_GRACE_SECONDS = 604_800;
const DEFAULT_GRACE_SECONDS = 86_400;

const modelList = (isKnown: (id: string) => boolean) =>
  z
    .array(z.string().refine(isKnown, { message: 'is not a known model id' }))
    .max(200)
    .nullable()
    .optional()
    .transform((v) => (v && v.length > 0 ? [...new Set(v)] : null));

/** Which of the budget fields a request sent (null included: it clears). */
const sentBudgets = (input: unknown) => {
  const raw = (input ?? {}) as Record<string, unknown>;
  return { dailySpendCap: 'dailySpendCap' in raw, budgets: 'budgets' in raw };
};

/** An RFC 3339 date-time with its offset, later than now on `clock` (null clears it on an edit). */
const expiry = (clock: Clock) =>
  z.iso
    .datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone, such as 2027-01-31T00:00:00Z' })
    .transform((text) => new Date(text))
    .refine((at) => at.getTime() > clock.now(), 'must be in the future')
    .nullable()
    .optional();

const keyNotFound = (keyId: string) => notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);

export class KeyService {
  private readonly createSchema;
  private readonly updateSchema;
  private readonly rotateSchema = z.object({ graceSeconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(DEFAULT_GRACE_SECONDS) }).strict();
  private readonly lastUsed: LastUsedWriter;
  private readonly refresher?: KeyRefresher;

  constructor(
    private readonly keys: KeyRepository,
    isKnownModel: (id: string) => boolean,
    private readonly urls: UrlGuard,
    private readonly cache?: KeyCache,
    private readonly directory?: KeyDirectory,
    /** What lastUsed's resolution and its batched writes are timed on; the cache's background reads too. */
    private readonly clock: Clock = systemClock,
    /** `key.expiring`'s work rows, written with each expiry set or changed. */
    private readonly expiryNotices?: KeyExpiryNotices,
  ) {
    this.lastUsed = new LastUsedWriter(keys, clock);
    if (cache) this.refresher = new KeyRefresher(keys, cache, clock);
    // What an owner may set on a key, when it is made and later; only the mode is fixed at creation.
    const settable = z.object({
      name: oneLineLabel(z.string().trim().min(1).max(100)).optional(),
      allowedModels: modelList(isKnownModel),
      blockedModels: modelList(isKnownModel),
      dailySpendCap: dailySpendCapField,
      budgets: budgetsField,
      expiresAt: expiry(clock),
    });
    this.createSchema = settable.extend({ mode: z.enum(['live', 'test']).default('live') }).strict();
    this.updateSchema = settable.strict();
  }

  async create(accountId: string, input: unknown): Promise<{ key: ApiKey; secret: string }> {
    const v = parseInput(this.createSchema, input);
    const budgets = { dailySpendCapMicro: null, weekBudgetMicro: null, monthBudgetMicro: null, ...budgetChanges(v, sentBudgets(input)) };
    const id = newKeyId(v.mode);
    const secret = newKeySecret(id);
    const key = await this.keys.transaction(async (tx) => {
      // Lock the account row so two concurrent creates cannot both see 9 active keys.
      await this.keys.lockAccount(tx, accountId);
      if ((await this.keys.countActive(tx, accountId)) >= MAX_ACTIVE_KEYS) {
        throw new DomainError('key_limit_reached', `An account may hold at most ${MAX_ACTIVE_KEYS} active API keys.`);
      }
      const inserted = await this.keys.insert(tx, {
        id,
        accountId,
        name: v.name ?? `${v.mode} key`,
        mode: v.mode,
        secretHash: hashSecret(secret),
        allowedModels: v.allowedModels ?? null,
        blockedModels: v.blockedModels ?? null,
        ...budgets, // micro-credits already (creditAmount)
        expiresAt: v.expiresAt ?? null,
      });
      await this.expiryNotices?.schedule(tx, inserted);
      return inserted;
    });
    // Known here at once; the other instances hear of it (their directories read it) before the secret is answered.
    this.directory?.set(id, { secretHash: hashSecret(secret), previousSecretHash: null, previousSecretUntil: null });
    await this.cache?.invalidate(id);
    return { key, secret };
  }

  async list(accountId: string): Promise<ApiKey[]> {
    return this.keys.listActive(accountId);
  }

  /** One active key of the account; another account's key answers 404 like a missing one. */
  async get(accountId: string, keyId: string): Promise<ApiKey> {
    const key = await this.keys.findActive(accountId, keyId);
    if (!key) throw keyNotFound(keyId);
    return key;
  }

  async update(accountId: string, keyId: string, input: unknown): Promise<ApiKey> {
    const v = parseInput(this.updateSchema, input);
    const changes: KeyChanges = {};
    const raw = (input ?? {}) as Record<string, unknown>;
    if (v.name !== undefined) changes.name = v.name;
    if ('allowedModels' in raw) changes.allowedModels = v.allowedModels ?? null;
    if ('blockedModels' in raw) changes.blockedModels = v.blockedModels ?? null;
    Object.assign(changes, budgetChanges(v, sentBudgets(raw)));
    if ('expiresAt' in raw) changes.expiresAt = v.expiresAt ?? null;
    if (Object.keys(changes).length === 0) return this.get(accountId, keyId);
    const key = await this.write(accountId, keyId, changes);
    if (!key) throw keyNotFound(keyId);
    await this.cache?.invalidate(keyId);
    return key;
  }

  /** An edit; one that sets or changes the expiry writes its notices' work rows in the same transaction. */
  private write(accountId: string, keyId: string, changes: KeyChanges): Promise<ApiKey | undefined> {
    const notices = this.expiryNotices;
    if (!notices || !changes.expiresAt) return this.keys.update(accountId, keyId, changes);
    return this.keys.transaction(async (tx) => {
      const key = await this.keys.update(accountId, keyId, changes, tx);
      if (key) await notices.schedule(tx, key);
      return key;
    });
  }

  /**
   * A new secret for the key (answered this once). The secret it replaces is still taken for
   * `graceSeconds` (0: not at all); one replaced by an earlier rotation, still in its grace, stops
   * at once. Every instance drops the key's cached record, and reads both secrets with their
   * grace; the grace's end is then decided on each, on its clock.
   */
  async rotate(accountId: string, keyId: string, input: unknown): Promise<{ key: ApiKey; secret: string }> {
    const { graceSeconds } = parseInput(this.rotateSchema, input);
    const secret = newKeySecret(keyId);
    const now = this.clock.now();
    const rotated = await this.keys.rotate(accountId, keyId, {
      secretHash: hashSecret(secret),
      previousSecretUntil: graceSeconds > 0 ? new Date(now + graceSeconds * 1000) : null,
      rotatedAt: new Date(now),
    });
    if (!rotated) throw keyNotFound(keyId);
    this.directory?.set(keyId, rotated);
    await this.cache?.invalidate(keyId);
    const { secretHash: _current, previousSecretHash: _previous, ...key } = rotated;
    return { key, secret };
  }

  async revoke(accountId: string, keyId: string): Promise<void> {
    if (!(await this.keys.revoke(accountId, keyId))) throw keyNotFound(keyId);
    await this.cache?.invalidate(keyId);
  }

  /** The key's webhook (webhook-change.ts): answers the secret when one was made (shown this once). */
  async configureWebhook(accountId: string, keyId: string, input: unknown): Promise<{ url: string | null; secret?: string }> {
    const change = parseWebhookChange(input);
    const current = await this.get(accountId, keyId);
    if (change.kind === 'clear') {
      await this.keys.clearWebhook(accountId, keyId);
      return { url: null };
    }
    if (change.kind === 'set') {
      const url = await this.urls.checkWebhookUrl(change.url, ['url']);
      const secret = newWebhookSecret();
      await this.keys.setWebhook(accountId, keyId, url, secret);
      return { url, secret };
    }
    if (!current.webhookUrl) throw nothingToRegenerate('This key');
    const secret = newWebhookSecret();
    await this.keys.setWebhookSecret(accountId, keyId, secret);
    return { url: current.webhookUrl, secret };
  }

  /**
   * Bearer-key authentication for /v1 and GraphQL; any failure is the same 401, except that a
   * secret of an expired key is told so (`api_key_expired`). A wrong secret (or a replaced one
   * past its grace) is refused from memory whether its key id exists or not (the key cache, else
   * the key directory), with the same work: a hash, two constant-time compares, and a wait until
   * the key feed has caught up (a turn of the event loop in one process, a PING over Redis).
   */
  async authenticate(secret: string): Promise<KeyPrincipal> {
    const keyId = keyIdOfSecret(secret);
    if (!keyId) throw unauthenticated('Invalid API key.');
    const cached = this.cache?.get(keyId);
    if (cached) {
      const verdict = judgeSecret(secret, cached.credentials, this.clock.now());
      if (verdict === 'refused') return this.refuseCaughtUp();
      this.refresher?.used(keyId, cached);
      return this.admitted(keyId, verdict, cached.principal, cached.credentials);
    }
    if (this.directory && !(await this.directoryLetsThrough(keyId, secret))) throw unauthenticated('Invalid API key.');
    const loadedAt = this.cache?.startLoad() ?? 0;
    // A read that can be let go: a database that does not answer makes this a 503, not a request
    // held for as long as the silence lasts (its client long gone, its connection held open).
    const [row] = await withinDeadline(this.keys.findActiveKeys([keyId]), DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock);
    if (!row) throw unauthenticated('Invalid API key.');
    const credentials = credentialsOf(row, row.expiresAt);
    const verdict = judgeSecret(secret, credentials, this.clock.now());
    if (verdict === 'refused') throw unauthenticated('Invalid API key.');
    const principal = principalOf(row);
    this.cache?.put(keyId, loadedAt, principal, credentials);
    return this.admitted(keyId, verdict, principal, credentials);
  }

  /** A secret of the key's own: refused when the key has expired; the replaced one's principal lasts until its grace ends. */
  private admitted(keyId: string, verdict: Exclude<SecretVerdict, 'refused'>, principal: KeyPrincipal, credentials: KeyCredentials): KeyPrincipal {
    if (verdict === 'expired') throw apiKeyExpired();
    this.lastUsed.touch(keyId);
    if (verdict === 'current') return principal;
    return { ...principal, usableUntil: Math.min(principal.usableUntil ?? Infinity, credentials.previousSecretUntil) };
  }

  /**
   * A cached key's wrong secret, refused once the key feed has caught up, as the directory's
   * refusals are (directoryLetsThrough): the same wait, so its time does not tell which it was.
   */
  private async refuseCaughtUp(): Promise<never> {
    if (this.directory) await this.directory.caughtUp();
    throw unauthenticated('Invalid API key.');
  }

  /**
   * Whether the database must be asked: the directory knows the key and the secret matches, or it
   * cannot tell. An id no active key has is compared against a hash no secret has, so its
   * refusal does the work a wrong secret's does. Looked up once the key feed has caught up (the
   * wait every refusal takes): a key created on another instance before this request arrived has
   * been announced here by then, and is read from the database.
   */
  private async directoryLetsThrough(keyId: string, secret: string): Promise<boolean> {
    // A key created on another instance just before this request must not be refused unheard of.
    if (!(await this.directory!.caughtUp())) return true;
    const answer = this.directory!.lookup(keyId);
    if (answer.kind === 'ask') return true;
    const verdict = judgeSecret(secret, answer.kind === 'known' ? answer.credentials : NO_CREDENTIALS, this.clock.now());
    return verdict !== 'refused' && answer.kind === 'known';
  }
}
