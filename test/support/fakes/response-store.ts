/**
 * Stored responses in memory, scoped by account as the database's are: what is saved is copied
 * (as a jsonb column holds it), read back only by its own account, and deleted with its output
 * items. Nothing expires: the retention is the database's clock, not this store's.
 */
import type { ResponseStore, StoredResponse } from '../../../src/domain/chat/responses/response-store';
import type { ResponsesInputItem } from '../../../src/domain/chat/responses/responses-request';

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** What the Responses service asks of its store. */
type ResponseStorePort = Pick<ResponseStore, 'save' | 'find' | 'items' | 'delete'>;

export class FakeResponseStore implements ResponseStorePort {
  private readonly responses = new Map<string, { accountId: string; stored: StoredResponse }>();
  private readonly outputItems = new Map<string, { accountId: string; responseId: string; item: ResponsesInputItem }>();

  async save(accountId: string, id: string, items: readonly unknown[], outputItems: readonly { id: string }[], response: unknown): Promise<void> {
    if (this.responses.has(id)) throw new Error(`duplicate key value violates unique constraint: stored_responses ${id}`);
    this.responses.set(id, { accountId, stored: copy({ items: items as ResponsesInputItem[], response: response as Record<string, unknown> }) });
    for (const item of outputItems) this.outputItems.set(item.id, { accountId, responseId: id, item: copy(item) as unknown as ResponsesInputItem });
  }

  async find(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const row = this.responses.get(id);
    return row && row.accountId === accountId ? copy(row.stored) : undefined;
  }

  async items(accountId: string, ids: readonly string[]): Promise<Map<string, ResponsesInputItem>> {
    const found = new Map<string, ResponsesInputItem>();
    for (const id of ids) {
      const row = this.outputItems.get(id);
      if (row && row.accountId === accountId) found.set(id, copy(row.item));
    }
    return found;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const row = this.responses.get(id);
    if (!row || row.accountId !== accountId) return false;
    this.responses.delete(id);
    for (const [itemId, item] of this.outputItems) if (item.responseId === id) this.outputItems.delete(itemId);
    return true;
  }

  /** Responses stored, of every account. */
  get size(): number {
    return this.responses.size;
  }

  /** As the service takes it: ResponseStore names the class, whose database the fake has no need of. */
  asStore(): ResponseStore {
    return this as unknown as ResponseStore;
  }
}
