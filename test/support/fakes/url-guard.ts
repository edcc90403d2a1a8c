/** A URL guard that passes every URL but those on hosts it was told to refuse, refused as the real one refuses: a 400 naming the field. */
import { invalidField } from '../../../src/domain/errors/domain-error';
import type { FieldPath } from '../../../src/domain/errors/field-path';
import type { UrlGuard } from '../../../src/domain/ports/url-guard';

export class FakeUrlGuard implements UrlGuard {
  readonly checked: string[] = [];

  constructor(private readonly refusedHosts: readonly string[] = []) {}

  async checkMediaUrl(url: unknown, path: FieldPath): Promise<string> {
    return this.check(url, path);
  }

  async checkWebhookUrl(url: unknown, path: FieldPath): Promise<string> {
    return this.check(url, path);
  }

  private check(url: unknown, path: FieldPath): string {
    const text = String(url);
    this.checked.push(text);
    if (this.refusedHosts.includes(new URL(text).hostname)) throw invalidField(path, 'the address is not allowed.');
    return text;
  }
}
