/** A URL guard that passes every URL but those on hosts it was told to refuse, refused as the real one refuses: a 400 naming the field. */
import { invalidRequest } from '../../../src/domain/errors/domain-error';
import type { UrlGuard } from '../../../src/domain/ports/url-guard';

export class FakeUrlGuard implements UrlGuard {
  readonly checked: string[] = [];

  constructor(private readonly refusedHosts: readonly string[] = []) {}

  async checkMediaUrl(url: unknown, param: string): Promise<string> {
    return this.check(url, param);
  }

  async checkWebhookUrl(url: unknown, param: string): Promise<string> {
    return this.check(url, param);
  }

  private check(url: unknown, param: string): string {
    const text = String(url);
    this.checked.push(text);
    if (this.refusedHosts.includes(new URL(text).hostname)) throw invalidRequest(`Invalid '${param}': the address is not allowed.`, param);
    return text;
  }
}
