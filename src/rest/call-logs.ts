/**
 * The request log on the /v1 door: once a request's API key is authenticated (Express's chain
 * or the JSON lane), its row is opened under its `x-request-id` and kept on the response; the
 * routes hand it to their service, the one error path names the failure on it, and the
 * response's `close` ends it with the status sent (or 499 when the client left before any
 * answer). Only a call that named a model is written (CallLog).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { KeyPrincipal } from '../domain/keys/principal';
import type { RequestLog } from '../domain/requests/request-log';
import { CLIENT_CLOSED_STATUS, type CallLog } from '../domain/requests/call-log';
import { IDEMPOTENCY_HEADER } from '../domain/idempotency/idempotency-service';
import { REQUEST_ID_HEADER } from '../infra/http/request-id';
import { keyOf } from './auth';

const LOG = Symbol('call-log');
type Logged = ServerResponse & { [LOG]?: CallLog };

/** The request's row, when the log records it. */
export function callLogOf(res: ServerResponse): CallLog | undefined {
  return (res as Logged)[LOG];
}

/** Idempotency-Key values are at most 255 characters; one that is not is refused, and its row keeps as much. */
const MAX_IDEMPOTENCY_KEY = 255;
const IDEMPOTENCY = IDEMPOTENCY_HEADER.toLowerCase();

/** Opens the row of an authenticated /v1 request (once, however often it is asked). */
export function openCallLog(requestLog: RequestLog, key: KeyPrincipal, req: IncomingMessage, res: ServerResponse, endpoint: string): void {
  if ((res as Logged)[LOG]) return;
  // As sent (two of them, which the claim refuses, joined by node): the row says what the client asked.
  const idempotencyKey = req.headers[IDEMPOTENCY] as string | undefined;
  const log = requestLog.begin(
    String(res.getHeader(REQUEST_ID_HEADER)),
    key.accountId,
    key.keyId,
    endpoint,
    idempotencyKey === undefined ? null : idempotencyKey.slice(0, MAX_IDEMPOTENCY_KEY),
  );
  if (!log) return;
  (res as Logged)[LOG] = log;
  res.on('close', ended);
}

/** One listener for every response (no closure per request). */
function ended(this: ServerResponse): void {
  const log = (this as Logged)[LOG];
  if (!log) return;
  // Express's parsed body (the JSON lane names its own): the model a refusal's body named.
  log.requested((this.req as { body?: unknown } | undefined)?.body);
  const finished = this.writableFinished;
  log.ended(finished || this.headersSent ? this.statusCode : CLIENT_CLOSED_STATUS, !finished);
}

/** Express's /v1 chain, after the API key: the row of the request, under the path it asked for. */
export function openCallLogs(requestLog: RequestLog): RequestHandler {
  return (req, res, next) => {
    openCallLog(requestLog, keyOf(res), req, res, req.baseUrl + req.path);
    next();
  };
}
