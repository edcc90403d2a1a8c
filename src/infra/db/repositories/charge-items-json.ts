/**
 * Charges and request-log rows as the JSON the database functions read, written straight into
 * one string: this runs for every charged call, and building an object per item and per log row
 * to stringify them cost more CPU and more bytes on the wire than the rest of a charge's recording.
 *
 * Both are logged calls as svc_log_requests reads them: the call's id, account, key and model at
 * the top (a charge item's, or a lone row's own), its credits (`lease_micro` for a charge, set by
 * the function; `credits_micro` for a row written as it is), and its `log`, the rest of the row:
 * what the top says already is left out, and so is every field that is null or zero (read as
 * such). A row field that differs from its item's is kept, and wins.
 */
import type { RequestLogRow } from '../../../domain/requests/call-log';
import type { ChargeRow } from '../../../domain/credits/lease-store';

const str = (s: string): string => JSON.stringify(s);

/** The log row of `charge`, without what the charge item carries. */
export function compactLogJson(log: RequestLogRow, charge: Pick<ChargeRow, 'requestId' | 'accountId' | 'keyId' | 'model'>): string {
  let s = `{"createdMs":${log.createdMs},"endpoint":${str(log.endpoint)},"status":${log.status}`;
  if (log.id !== charge.requestId) s += `,"id":${str(log.id)}`;
  if (log.accountId !== charge.accountId) s += `,"accountId":${str(log.accountId)}`;
  if (log.keyId !== charge.keyId) s += `,"keyId":${str(log.keyId)}`;
  if (log.model !== charge.model) s += `,"model":${log.model === null ? 'null' : str(log.model)}`;
  if (log.promptTokens) s += `,"promptTokens":${log.promptTokens}`;
  if (log.completionTokens) s += `,"completionTokens":${log.completionTokens}`;
  if (log.images) s += `,"images":${log.images}`;
  if (log.seconds) s += `,"seconds":${log.seconds}`;
  if (log.latencyMs) s += `,"latencyMs":${log.latencyMs}`;
  if (log.idempotencyKey !== null) s += `,"idempotencyKey":${str(log.idempotencyKey)}`;
  if (log.errorType !== null) s += `,"errorType":${str(log.errorType)}`;
  if (log.errorCode !== null) s += `,"errorCode":${str(log.errorCode)}`;
  if (log.jobId !== null) s += `,"jobId":${str(log.jobId)}`;
  return `${s}}`;
}

/** `rows` as svc_record_charges' items. */
export function chargeItemsJson(rows: readonly ChargeRow[]): string {
  let s = '[';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (i > 0) s += ',';
    s +=
      `{"request_id":${str(r.requestId)},"lease_id":${str(r.leaseId)},"account_id":${str(r.accountId)},"api_key_id":${str(r.keyId)}` +
      `,"model":${r.model === null ? 'null' : str(r.model)},"lease_micro":${r.leaseMicro},"excess_micro":${r.excessMicro}` +
      `,"waived_micro":${r.waivedMicro ?? 0},"log":${r.log ? compactLogJson(r.log, r) : 'null'}}`;
  }
  return `${s}]`;
}

/** Request-log rows written as they are (no charge with them), as logged calls. */
export function loggedCallsJson(rows: readonly RequestLogRow[]): string {
  let s = '[';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (i > 0) s += ',';
    const call = { requestId: r.id, accountId: r.accountId, keyId: r.keyId, model: r.model };
    s +=
      `{"request_id":${str(r.id)},"account_id":${str(r.accountId)},"api_key_id":${str(r.keyId)}` +
      `,"model":${r.model === null ? 'null' : str(r.model)},"credits_micro":${r.creditsMicro},"log":${compactLogJson(r, call)}}`;
  }
  return `${s}]`;
}
