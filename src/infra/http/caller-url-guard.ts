import type { FieldPath } from '../../domain/errors/field-path';
import type { UrlGuard } from '../../domain/ports/url-guard';
import { checkCallerUrl, type HostLookup } from './url-check';

/** The domain's UrlGuard, by CONTRACT: media may be http(s); webhooks https only unless allowLocal. */
export class CallerUrlGuard implements UrlGuard {
  constructor(private readonly options: { webhookAllowLocal: boolean; lookup?: HostLookup }) {}

  checkMediaUrl(url: unknown, path: FieldPath): Promise<string> {
    return checkCallerUrl(url, { path, allowHttp: true, allowLocal: false, lookup: this.options.lookup });
  }

  checkWebhookUrl(url: unknown, path: FieldPath): Promise<string> {
    const local = this.options.webhookAllowLocal;
    return checkCallerUrl(url, { path, allowHttp: local, allowLocal: local, lookup: this.options.lookup });
  }
}
