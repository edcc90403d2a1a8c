/** The request log's REST shapes: a row as a list and JSON lines give it, and as a CSV line. */
import { requestView, type RequestLogRow } from '../../domain/requests/call-log';
import { microToCredits } from '../../domain/shared/money';

/** A row as a list and JSON lines give it: `created` in Unix seconds, as OpenAI's objects carry it. */
export function requestRecord(r: RequestLogRow) {
  const { id, ...rest } = requestView(r);
  return { id, created: Math.floor(r.createdMs / 1000), ...rest };
}

const COLUMNS = [
  'id',
  'created',
  'keyId',
  'model',
  'endpoint',
  'status',
  'credits',
  'promptTokens',
  'completionTokens',
  'images',
  'seconds',
  'latencyMs',
  'idempotencyKey',
  'errorType',
  'errorCode',
  'jobId',
] as const;

export const csvHeader = (): string => `${COLUMNS.join(',')}\r\n`;

/**
 * A text cell as RFC 4180 writes it: quoted, its quotes doubled, when it holds a comma, a quote or
 * a line break. A cell a spreadsheet would run as a formula (it begins with `=`, `+`, `-`, `@`, a
 * tab or a carriage return: a model name or an Idempotency-Key is the client's text) is written
 * after a `'`, which spreadsheets show as text, as OWASP advises.
 */
function cell(value: string | null): string {
  if (value === null) return '';
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows as CSV lines (CRLF), `created` as an RFC 3339 UTC time to the millisecond. */
export function csvLines(rows: readonly RequestLogRow[]): string {
  let text = '';
  for (const r of rows) {
    text += `${cell(r.id)},${new Date(r.createdMs).toISOString()},${cell(r.keyId)},${cell(r.model)},${cell(r.endpoint)},${r.status},${microToCredits(r.creditsMicro)},`;
    text += `${r.promptTokens},${r.completionTokens},${r.images},${r.seconds},${r.latencyMs},${cell(r.idempotencyKey)},${cell(r.errorType)},${cell(r.errorCode)},${cell(r.jobId)}\r\n`;
  }
  return text;
}
