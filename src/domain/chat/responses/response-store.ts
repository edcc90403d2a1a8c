/**
 * Stored responses: the conversation each response ended (its resolved input items followed by
 * its output items), for `previous_response_id`; and each output item by id, for
 * `item_reference`. Every read is scoped to the caller's account; rows older than the retention
 * are invisible and are deleted when the account next stores one.
 */
import type { Database } from '../../ports/database';
import type { ResponsesInputItem } from './responses-request';

export const RESPONSE_RETENTION_DAYS = 30;
const FRESH = `created_at > now() - make_interval(days => ${RESPONSE_RETENTION_DAYS})`;

export interface StoredResponse {
  /** Every item of the conversation up to and including this response's output. */
  items: ResponsesInputItem[];
  response: Record<string, unknown>;
}

const parse = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

export class ResponseStore {
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

  /** The stored output items among `ids` that belong to the account. */
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
