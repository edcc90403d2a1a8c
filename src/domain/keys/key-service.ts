import type { KeyCache } from './key-cache';
import type { KeyDirectory } from './key-directory';
import { KeyRefresher } from './key-refresher';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { UrlGuard } from '../ports/url-guard';
import { DomainError, databaseTooSlow, invalidField, invalidRequest, notFound, unauthenticated } from '../errors/domain-error';
import { asWritten, FIELD, words } from '../errors/field-path';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { assertStorableText, oneLineLabel, parseInput } from '../shared/validate';
import { randomBase62 } from '../shared/ids';
import { principalOf, type ApiKey } from './key-record';
import type { KeyChanges, KeyRepository } from './key-repository';
import { budgetChanges, budgetsField, dailySpendCapField } from './key-budgets';
import { hashSecret, keyIdOfSecret, newKeyId, newKeySecret, secretMatchesHash } from './key-secrets';
import type { KeyPrincipal } from './principal';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

export const MAX_ACTIVE_KEYS = 10;
/** The hash an unknown key id's secret is compared against: 32 bytes no SHA-256 of a secret is (in any practical sense). */
const NO_SECRET_HAS = randomBytes(32);
/** lastUsed is a hint, not an audit trail: written at most once a minute per key. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a key's lastUsed waits for others to be written with it. */
const LAST_USED_FLUSH_MS = 500;

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

export class KeyService {
  private readonly createSchema;
  private readonly updateSchema;
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly lastUsedPending = new Set<string>();
  private lastUsedFlush: TimerHandle | undefined;
  private readonly refresher?: KeyRefresher;

  constructor(
    private readonly keys: KeyRepository,
    isKnownModel: (id: string) => boolean,
    private readonly urls: UrlGuard,
    private readonly cache?: KeyCache,
    private readonly directory?: KeyDirectory,
    /** What lastUsed's resolution and its batched writes are timed on; the cache's background reads too. */
    private readonly clock: Clock = systemClock,
  ) {
    if (cache) this.refresher = new KeyRefresher(keys, cache, clock);
    this.createSchema = z
      .object({
        name: oneLineLabel(z.string().trim().min(1).max(100)).optional(),
        mode: z.enum(['live', 'test']).default('live'),
        allowedModels: modelList(isKnownModel),
        blockedModels: modelList(isKnownModel),
        dailySpendCap: dailySpendCapField,
        budgets: budgetsField,
      })
      .strict();
    this.updateSchema = z
      .object({
        name: oneLineLabel(z.string().trim().min(1).max(100)).optional(),
        allowedModels: modelList(isKnownModel),
        blockedModels: modelList(isKnownModel),
        dailySpendCap: dailySpendCapField,
        budgets: budgetsField,
      })
      .strict();
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
      return this.keys.insert(tx, {
        id,
        accountId,
        name: v.name ?? `${v.mode} key`,
        mode: v.mode,
        secretHash: hashSecret(secret),
        allowedModels: v.allowedModels ?? null,
        blockedModels: v.blockedModels ?? null,
        ...budgets, // micro-credits already (creditAmount)
      });
    });
    // Known here at once; the other instances hear of it (their directories read it) before the secret is answered.
    this.directory?.add(id, hashSecret(secret));
    await this.cache?.invalidate(id);
    return { key, secret };
  }

  async list(accountId: string): Promise<ApiKey[]> {
    return this.keys.listActive(accountId);
  }

  /** One active key of the account; another account's key answers 404 like a missing one. */
  async get(accountId: string, keyId: string): Promise<ApiKey> {
    const key = await this.keys.findActive(accountId, keyId);
    if (!key) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
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
    if (Object.keys(changes).length === 0) return this.get(accountId, keyId);
    const key = await this.keys.update(accountId, keyId, changes);
    if (!key) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
    await this.cache?.invalidate(keyId);
    return key;
  }

  async revoke(accountId: string, keyId: string): Promise<void> {
    if (!(await this.keys.revoke(accountId, keyId))) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
    await this.cache?.invalidate(keyId);
  }

  /**
   * SPEC webhook body: `{url}` registers (new secret), `{regenerateSecret: true}` rotates,
   * `{url: null}` clears both. Answers the secret when one was made (shown this once).
   */
  async configureWebhook(accountId: string, keyId: string, input: unknown): Promise<{ url: string | null; secret?: string }> {
    const body = (input ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('The body must be a JSON object.');
    assertStorableText(body);
    const unknownField = Object.keys(body).find((k) => k !== 'url' && k !== 'regenerateSecret');
    if (unknownField) throw invalidRequest(`Unknown field '${unknownField}'.`, [asWritten(unknownField)]);
    const current = await this.get(accountId, keyId);
    if ('url' in body && body.url === null) {
      await this.keys.clearWebhook(accountId, keyId);
      return { url: null };
    }
    if ('url' in body) {
      const url = await this.urls.checkWebhookUrl(body.url, ['url']);
      const secret = `whsec_${randomBase62(32)}`;
      await this.keys.setWebhook(accountId, keyId, url, secret);
      return { url, secret };
    }
    if (body.regenerateSecret === true) {
      if (!current.webhookUrl) throw invalidRequest('This key has no webhook to regenerate a secret for.', ['regenerateSecret']);
      const secret = `whsec_${randomBase62(32)}`;
      await this.keys.setWebhookSecret(accountId, keyId, secret);
      return { url: current.webhookUrl, secret };
    }
    // `regenerateSecret: false` (or any value but true) is a field sent wrong, named as such.
    if ('regenerateSecret' in body) throw invalidField(['regenerateSecret'], "must be true (send 'url': null to remove the webhook).");
    throw invalidRequest(words`The body must carry '${FIELD}' (a URL or null) or 'regenerateSecret': true.`, ['url']);
  }

  /**
   * Bearer-key authentication for /v1 and GraphQL; any failure is the same 401. A wrong secret is
   * refused from memory whether its key id exists or not (the key cache, else the key
   * directory), with the same work: a hash, a constant-time compare, and a wait until the key
   * feed has caught up (a turn of the event loop in one process, a PING over Redis).
   */
  async authenticate(secret: string): Promise<KeyPrincipal> {
    const keyId = keyIdOfSecret(secret);
    if (!keyId) throw unauthenticated('Invalid API key.');
    const cached = this.cache?.get(keyId);
    if (cached) {
      if (!secretMatchesHash(secret, cached.secretHash)) return this.refuseCaughtUp();
      this.touchLastUsed(keyId);
      this.refresher?.used(keyId, cached);
      return cached.principal;
    }
    if (this.directory && !(await this.directoryLetsThrough(keyId, secret))) throw unauthenticated('Invalid API key.');
    const loadedAt = this.cache?.startLoad() ?? 0;
    // A read that can be let go: a database that does not answer makes this a 503, not a request
    // held for as long as the silence lasts (its client long gone, its connection held open).
    const [row] = await withinDeadline(this.keys.findActiveKeys([keyId]), DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow, this.clock);
    if (!row || !secretMatchesHash(secret, row.secretHash)) throw unauthenticated('Invalid API key.');
    this.touchLastUsed(keyId);
    const principal = principalOf(row);
    this.cache?.put(keyId, loadedAt, principal, row.secretHash);
    return principal;
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
    const matches = secretMatchesHash(secret, answer.kind === 'known' ? answer.secretHash : NO_SECRET_HAS);
    return matches && answer.kind === 'known';
  }

  /**
   * lastUsed has a minute's resolution, and the keys used in the last moment are written
   * together, one statement for all of them (thousands of keys in use would otherwise cost a
   * commit each per minute on the request path).
   */
  private touchLastUsed(keyId: string): void {
    const now = this.clock.monotonic();
    if (now - (this.lastUsedWritten.get(keyId) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.lastUsedPending.add(keyId);
    this.scheduleLastUsedFlush();
  }

  private scheduleLastUsedFlush(): void {
    if (this.lastUsedFlush) return;
    this.lastUsedFlush = this.clock.setTimeout(() => {
      this.lastUsedFlush = undefined;
      const ids = [...this.lastUsedPending].slice(0, 1000);
      for (const id of ids) this.lastUsedPending.delete(id);
      if (this.lastUsedPending.size > 0) this.scheduleLastUsedFlush();
      this.keys.markUsed(ids).catch(() => undefined);
    }, LAST_USED_FLUSH_MS);
    this.lastUsedFlush.unref();
  }
}
