import { LEDGER_PAGE } from '../domain/history/ledger-entries';
import { VIDEO_JOB_PAGE } from '../domain/video/video-service';
import { DELIVERY_PAGE } from '../domain/webhooks/delivery-log';
import { REQUEST_LOG_PAGE } from '../domain/requests/request-log-query';
import { PURCHASE_PAGE } from '../domain/purchases/purchase';
import type { PageRule } from '../domain/shared/page-rule';

export { DELIVERY_PAGE, LEDGER_PAGE, PURCHASE_PAGE, REQUEST_LOG_PAGE, VIDEO_JOB_PAGE };

/** Only the arguments that were given (GraphQL's null is REST's absent), so validation and `param` match REST. */
export function definedArgs(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null));
}

/** A GraphQL list's paging arguments checked by the domain's rule (null is absent). */
export function checkedPage(rule: PageRule, args: { first?: number | null; after?: string | null }): { first: number; after?: string } {
  return rule.check(definedArgs(args));
}
