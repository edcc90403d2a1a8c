import type { KeyCache } from './key-cache';
import type { KeyDirectory } from './key-directory';
import { KeyRefresher } from './key-refresher';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../ports/database';
import type { UrlGuard } from '../ports/url-guard';
import { DomainError, databaseTooSlow, invalidField, invalidRequest, notFound, unauthenticated } from '../errors/domain-error';
import { asWritten, FIELD, words } from '../errors/field-path';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { assertStorableText, oneLineLabel, parseInput } from '../shared/validate';
import { creditAmount } from '../shared/credit-amount';
import { randomBase62 } from '../shared/ids';
import { KEY_COLUMNS, activeKeyRows, principalOf, toApiKey, type ApiKey, type ApiKeyRow } from './key-record';
import { hashSecret, keyIdOfSecret, newKeyId, newKeySecret, secretMatchesHash } from './key-secrets';
import type { KeyPrincipal } from './principal';
import { monotonicMillis } from '../shared/time';

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

/** Credits per UTC day, parsed into exact micro-credits (null clears the cap). */
const cap = creditAmount({ sign: 'positive', max: 1e9 }).nullable().optional();

export class KeyService {
  private readonly createSchema;
  private readonly updateSchema;
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly lastUsedPending = new Set<string>();
  private lastUsedFlush: NodeJS.Timeout | undefined;
  private readonly refresher?: KeyRefresher;

  constructor(
    private readonly db: Database,
    isKnownModel: (id: string) => boolean,
    private readonly urls: UrlGuard,
    private readonly cache?: KeyCache,
    private readonly directory?: KeyDirectory,
  ) {
    if (cache) this.refresher = new KeyRefresher(db, cache);
    this.createSchema = z
      .object({
        name: oneLineLabel(z.string().trim().min(1).max(100)).optional(),
        mode: z.enum(['live', 'test']).default('live'),
        allowedModels: modelList(isKnownModel),
        blockedModels: modelList(isKnownModel),
        dailySpendCap: cap,
      })
      .strict();
    this.updateSchema = z
      .object({
        name: oneLineLabel(z.string().trim().min(1).max(100)).optional(),
        allowedModels: modelList(isKnownModel),
        blockedModels: modelList(isKnownModel),
        dailySpendCap: cap,
      })
      .strict();
  }

  async create(accountId: string, input: unknown): Promise<{ key: ApiKey; secret: string }> {
    const v = parseInput(this.createSchema, input);
    const id = newKeyId(v.mode);
    const secret = newKeySecret(id);
    const key = await this.db.transaction(async (tx) => {
      // Lock the account row so two concurrent creates cannot both see 9 active keys.
      await tx.one(`select id from accounts where id = ? for update`, [accountId]);
      const active = await tx.one<{ n: string }>(`select count(*) as n from api_keys where account_id = ? and revoked_at is null`, [accountId]);
      if (Number(active?.n ?? 0) >= MAX_ACTIVE_KEYS) {
        throw new DomainError('key_limit_reached', `An account may hold at most ${MAX_ACTIVE_KEYS} active API keys.`);
      }
      const row = await tx.one<ApiKeyRow>(
        `insert into api_keys (id, account_id, name, mode, secret_hash, allowed_models, blocked_models, daily_spend_cap_micro)
         values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?) returning ${KEY_COLUMNS}`,
        [
          id,
          accountId,
          v.name ?? `${v.mode} key`,
          v.mode,
          hashSecret(secret),
          v.allowedModels ? JSON.stringify(v.allowedModels) : null,
          v.blockedModels ? JSON.stringify(v.blockedModels) : null,
          v.dailySpendCap ?? null, // micro-credits already (creditAmount)
        ],
      );
      return toApiKey(row!);
    });
    // Known here at once; the other instances hear of it (their directories read it) before the secret is answered.
    this.directory?.add(id, hashSecret(secret));
    await this.cache?.invalidate(id);
    return { key, secret };
  }

  async list(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db.all<ApiKeyRow>(`select ${KEY_COLUMNS} from api_keys where account_id = ? and revoked_at is null order by created_at desc, id`, [
      accountId,
    ]);
    return rows.map(toApiKey);
  }

  /** One active key of the account; another account's key answers 404 like a missing one. */
  async get(accountId: string, keyId: string): Promise<ApiKey> {
    const row = await this.db.one<ApiKeyRow>(`select ${KEY_COLUMNS} from api_keys where id = ? and account_id = ? and revoked_at is null`, [keyId, accountId]);
    if (!row) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
    return toApiKey(row);
  }

  async update(accountId: string, keyId: string, input: unknown): Promise<ApiKey> {
    const v = parseInput(this.updateSchema, input);
    const sets: string[] = [];
    const params: unknown[] = [];
    const raw = (input ?? {}) as Record<string, unknown>;
    const set = (column: string, value: unknown) => {
      sets.push(column);
      params.push(value);
    };
    if (v.name !== undefined) set('name = ?', v.name);
    if ('allowedModels' in raw) set('allowed_models = ?::jsonb', v.allowedModels ? JSON.stringify(v.allowedModels) : null);
    if ('blockedModels' in raw) set('blocked_models = ?::jsonb', v.blockedModels ? JSON.stringify(v.blockedModels) : null);
    if ('dailySpendCap' in raw) set('daily_spend_cap_micro = ?', v.dailySpendCap ?? null);
    if (sets.length === 0) return this.get(accountId, keyId);
    const row = await this.db.one<ApiKeyRow>(
      `update api_keys set ${sets.join(', ')} where id = ? and account_id = ? and revoked_at is null returning ${KEY_COLUMNS}`,
      [...params, keyId, accountId],
    );
    if (!row) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
    await this.cache?.invalidate(keyId);
    return toApiKey(row);
  }

  async revoke(accountId: string, keyId: string): Promise<void> {
    const touched = await this.db.run(
      `update api_keys set revoked_at = now(), webhook_url = null, webhook_secret = null
       where id = ? and account_id = ? and revoked_at is null`,
      [keyId, accountId],
    );
    if (touched === 0) throw notFound(`No API key with id '${keyId}'.`, 'key_not_found', ['id']);
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
      await this.db.run(`update api_keys set webhook_url = null, webhook_secret = null where id = ? and account_id = ?`, [keyId, accountId]);
      return { url: null };
    }
    if ('url' in body) {
      const url = await this.urls.checkWebhookUrl(body.url, ['url']);
      const secret = `whsec_${randomBase62(32)}`;
      await this.db.run(`update api_keys set webhook_url = ?, webhook_secret = ? where id = ? and account_id = ?`, [url, secret, keyId, accountId]);
      return { url, secret };
    }
    if (body.regenerateSecret === true) {
      if (!current.webhookUrl) throw invalidRequest('This key has no webhook to regenerate a secret for.', ['regenerateSecret']);
      const secret = `whsec_${randomBase62(32)}`;
      await this.db.run(`update api_keys set webhook_secret = ? where id = ? and account_id = ?`, [secret, keyId, accountId]);
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
    const [row] = await withinDeadline(activeKeyRows(this.db, [keyId]), DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow);
    if (!row || !secretMatchesHash(secret, row.secret_hash)) throw unauthenticated('Invalid API key.');
    this.touchLastUsed(keyId);
    const principal = principalOf(row);
    this.cache?.put(keyId, loadedAt, principal, row.secret_hash);
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
    const now = monotonicMillis();
    if (now - (this.lastUsedWritten.get(keyId) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.lastUsedPending.add(keyId);
    this.scheduleLastUsedFlush();
  }

  private scheduleLastUsedFlush(): void {
    if (this.lastUsedFlush) return;
    this.lastUsedFlush = setTimeout(() => {
      this.lastUsedFlush = undefined;
      const ids = [...this.lastUsedPending].slice(0, 1000);
      for (const id of ids) this.lastUsedPending.delete(id);
      if (this.lastUsedPending.size > 0) this.scheduleLastUsedFlush();
      this.db.run(`update api_keys set last_used_at = now() where id in (${ids.map(() => '?').join(', ')})`, ids).catch(() => undefined);
    }, LAST_USED_FLUSH_MS);
    this.lastUsedFlush.unref();
  }
}
