/**
 * Every database function, one current definition each. The migration runner applies them after
 * the migrations (database-functions.ts): a function whose text changed since it was last applied
 * is created again; migrations carry schema changes only.
 */
import { SVC_ACCOUNT_EVENT } from './svc-account-event';
import { SVC_ADD_KEY_SPEND } from './svc-add-key-spend';
import { SVC_BALANCE_ALERT } from './svc-balance-alert';
import { SVC_BUDGET_SHORT } from './svc-budget-short';
import { SVC_CHARGE } from './svc-charge';
import { SVC_CLOSE_LEASE } from './svc-close-lease';
import { SVC_COMMITTED_SPEND } from './svc-committed-spend';
import { SVC_GRANT } from './svc-grant';
import { SVC_LOCK_KEY_SPEND } from './svc-lock-key-spend';
import { SVC_LOG_REQUESTS } from './svc-log-requests';
import { SVC_NOTE_BUDGET_CROSSINGS } from './svc-note-budget-crossings';
import { SVC_PLACE_HOLD } from './svc-place-hold';
import { SVC_RECORD_CHARGES } from './svc-record-charges';
import { SVC_REFUND_ONCE } from './svc-refund-once';
import { SVC_REMOVE_CREDITS } from './svc-remove-credits';
import { SVC_REQUEST_LOG_PARTITIONS } from './svc-request-log-partitions';
import { SVC_SETTLE_HOLD } from './svc-settle-hold';
import { SVC_SHOWN_BALANCE } from './svc-shown-balance';
import { SVC_TAKE_LEASE } from './svc-take-lease';

export interface DatabaseFunction {
  name: string;
  sql: string;
}

/** The helpers the money functions call come first (svc_account_event … svc_note_budget_crossings). */
export const DATABASE_FUNCTIONS: readonly DatabaseFunction[] = [
  SVC_ACCOUNT_EVENT,
  SVC_BALANCE_ALERT,
  SVC_LOCK_KEY_SPEND,
  SVC_ADD_KEY_SPEND,
  SVC_BUDGET_SHORT,
  SVC_COMMITTED_SPEND,
  SVC_NOTE_BUDGET_CROSSINGS,
  SVC_CHARGE,
  SVC_CLOSE_LEASE,
  SVC_GRANT,
  SVC_LOG_REQUESTS,
  SVC_PLACE_HOLD,
  SVC_RECORD_CHARGES,
  SVC_REFUND_ONCE,
  SVC_REMOVE_CREDITS,
  SVC_REQUEST_LOG_PARTITIONS,
  SVC_SETTLE_HOLD,
  SVC_SHOWN_BALANCE,
  SVC_TAKE_LEASE,
];
