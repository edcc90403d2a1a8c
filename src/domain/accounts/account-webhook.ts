import type { UrlGuard } from '../ports/url-guard';
import { newWebhookSecret, nothingToRegenerate, parseWebhookChange } from '../webhooks/webhook-change';
import type { AccountRepository } from './account-repository';

/**
 * The account's own webhook, where its events go (`balance.low`, …: the account events'
 * outbox, svc_account_event): set, cleared and re-keyed as a key's webhook is, signed, sent and
 * retried by the same deliverer. The secret is answered when it is made, this once.
 */
export class AccountWebhook {
  constructor(
    private readonly accounts: Pick<AccountRepository, 'setWebhook' | 'setWebhookSecret'>,
    private readonly urls: UrlGuard,
  ) {}

  async configure(accountId: string, input: unknown): Promise<{ url: string | null; secret?: string }> {
    const change = parseWebhookChange(input);
    if (change.kind === 'clear') {
      await this.accounts.setWebhook(accountId, null);
      return { url: null };
    }
    const secret = newWebhookSecret();
    if (change.kind === 'set') {
      const url = await this.urls.checkWebhookUrl(change.url, ['url']);
      await this.accounts.setWebhook(accountId, { url, secret });
      return { url, secret };
    }
    const url = await this.accounts.setWebhookSecret(accountId, secret);
    if (!url) throw nothingToRegenerate('This account');
    return { url, secret };
  }
}
