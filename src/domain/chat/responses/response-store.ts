/**
 * Stored responses: the conversation each response ended (its resolved input items followed by
 * its output items), for `previous_response_id`; and each output item by id, for
 * `item_reference`. Every read is scoped to the caller's account; rows older than the retention
 * are invisible and are deleted when the account next stores one. Its SQL:
 * infra/db/repositories/sql-response-store.ts.
 */
import type { ResponsesInputItem } from './responses-request';

export const RESPONSE_RETENTION_DAYS = 30;

export interface StoredResponse {
  /** Every item of the conversation up to and including this response's output. */
  items: ResponsesInputItem[];
  response: Record<string, unknown>;
}

export interface ResponseStore {
  /** The response, its conversation and its output items, in one transaction. */
  save(accountId: string, id: string, items: readonly unknown[], outputItems: readonly { id: string }[], response: unknown): Promise<void>;
  find(accountId: string, id: string): Promise<StoredResponse | undefined>;
  /** The stored output items among `ids` that belong to the account. */
  items(accountId: string, ids: readonly string[]): Promise<Map<string, ResponsesInputItem>>;
  /** True when the account had the response. */
  delete(accountId: string, id: string): Promise<boolean>;
}
