import type { Database } from '../../../domain/ports/database';
import type { StoredResponse } from '../../../domain/idempotency/idempotency-service';
import type { ClaimName, ClaimRecord, ClaimRequest, IdempotencyRepository } from '../../../domain/idempotency/idempotency-repository';

interface Row {
  fingerprint: string;
  status_code: number | null;
  response_headers: Record<string, string> | string | null;
  response_body: string | null;
}

/** The `idempotency_keys` table's SQL; a response body is stored as base64 text. */
export class SqlIdempotencyRepository implements IdempotencyRepository {
  constructor(private readonly db: Database) {}

  async claim(request: ClaimRequest): Promise<string | undefined> {
    const row = await this.db.one<{ call_id: string }>(
      `insert into idempotency_keys (api_key_id, idempotency_key, fingerprint, expires_at, holder, heartbeat_at, call_id)
       values (?, ?, ?, now() + make_interval(secs => ?), ?, now(), ?)
       on conflict (api_key_id, idempotency_key) do update
         set fingerprint = excluded.fingerprint, status_code = null, response_headers = null, response_body = null,
             started_at = now(), expires_at = excluded.expires_at, holder = excluded.holder, heartbeat_at = now(), released = false,
             call_id = case when idempotency_keys.expires_at < now() then excluded.call_id
                            else coalesce(idempotency_keys.call_id, excluded.call_id) end
         where idempotency_keys.expires_at < now()
            or (idempotency_keys.status_code is null and idempotency_keys.fingerprint = excluded.fingerprint
                and (idempotency_keys.released
                  or (idempotency_keys.holder is null and idempotency_keys.started_at < now() - make_interval(secs => ?))
                  or (idempotency_keys.holder is not null and idempotency_keys.heartbeat_at < now() - make_interval(secs => ?))))
       returning call_id`,
      [
        request.apiKeyId,
        request.key,
        request.fingerprint,
        request.keepSeconds,
        request.holder,
        request.proposedCallId,
        request.abandonedAfterSeconds,
        request.graceSeconds,
      ],
    );
    return row?.call_id;
  }

  async find(name: ClaimName): Promise<ClaimRecord | undefined> {
    const row = await this.db.one<Row>(
      `select fingerprint, status_code, response_headers, response_body from idempotency_keys where api_key_id = ? and idempotency_key = ?`,
      [name.apiKeyId, name.key],
    );
    if (!row) return undefined;
    if (row.status_code === null) return { fingerprint: row.fingerprint, response: null };
    const headers = typeof row.response_headers === 'string' ? (JSON.parse(row.response_headers) as Record<string, string>) : (row.response_headers ?? {});
    return { fingerprint: row.fingerprint, response: { status: row.status_code, headers, body: Buffer.from(row.response_body ?? '', 'base64') } };
  }

  async storeResponse(name: ClaimName, holder: string, response: StoredResponse): Promise<void> {
    await this.db.run(
      `update idempotency_keys set status_code = ?, response_headers = ?::jsonb, response_body = ?
          where api_key_id = ? and idempotency_key = ? and status_code is null and holder = ?`,
      [response.status, JSON.stringify(response.headers), response.body.toString('base64'), name.apiKeyId, name.key, holder],
    );
  }

  async release(name: ClaimName, holder: string): Promise<void> {
    await this.db.run(
      `update idempotency_keys set released = true, holder = null, heartbeat_at = null
          where api_key_id = ? and idempotency_key = ? and status_code is null and holder = ?`,
      [name.apiKeyId, name.key, holder],
    );
  }

  async heartbeat(holder: string, claims: readonly ClaimName[]): Promise<void> {
    await this.db.run(
      `update idempotency_keys set heartbeat_at = now()
          where holder = ? and status_code is null
            and (api_key_id, idempotency_key) in (select * from unnest(?::text[], ?::text[]))`,
      [holder, claims.map((c) => c.apiKeyId), claims.map((c) => c.key)],
    );
  }

  async purgeExpired(): Promise<void> {
    await this.db.run(`delete from idempotency_keys where expires_at < now()`);
  }
}
