import type { Database } from '../../../domain/ports/database';
import type { ResponsesInputItem } from '../../../domain/chat/responses/responses-request';
import { RESPONSE_RETENTION_DAYS, type ResponseStore, type StoredResponse } from '../../../domain/chat/responses/response-store';

const FRESH = `created_at > now() - make_interval(days => ${RESPONSE_RETENTION_DAYS})`;

const parse = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

/** Stored responses on `stored_responses` and their output items on `stored_response_items`. */
export class SqlResponseStore implements ResponseStore {
  constructor(private readonly db: Database) {}

  async save(accountId: string, id: string, items: readonly unknown[], outputItems: readonly { id: string }[], response: unknown): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run(`delete from stored_responses where account_id = ? and not (${FRESH})`, [accountId]);
      await tx.run(`insert into stored_responses (id, account_id, items, response) values (?, ?, ?::jsonb, ?::jsonb)`, [
        id,
        accountId,
        JSON.stringify(items),
        JSON.stringify(response),
      ]);
      for (const item of outputItems) {
        await tx.run(`insert into stored_response_items (id, account_id, response_id, item) values (?, ?, ?, ?::jsonb)`, [
          item.id,
          accountId,
          id,
          JSON.stringify(item),
        ]);
      }
    });
  }

  async find(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const row = await this.db.one<{ items: unknown; response: unknown }>(
      `select items, response from stored_responses where id = ? and account_id = ? and ${FRESH}`,
      [id, accountId],
    );
    return row ? { items: parse(row.items), response: parse(row.response) } : undefined;
  }

  async items(accountId: string, ids: readonly string[]): Promise<Map<string, ResponsesInputItem>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.all<{ id: string; item: unknown }>(
      `select i.id, i.item from stored_response_items i join stored_responses r on r.id = i.response_id
        where i.account_id = ? and i.id in (${ids.map(() => '?').join(', ')}) and r.${FRESH}`,
      [accountId, ...ids],
    );
    return new Map(rows.map((r) => [r.id, parse<ResponsesInputItem>(r.item)]));
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.db.run(`delete from stored_responses where id = ? and account_id = ?`, [id, accountId])) > 0;
  }
}
