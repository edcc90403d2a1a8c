import type { Server } from 'node:http';
import { randomIdText } from '../../domain/shared/ids';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Every response carries `x-request-id: req_…`, as OpenAI's do: the SDKs surface it
 * (`_request_id`, `withResponse().request_id`, `APIError.requestID`) for a support ticket, and an
 * error's log line carries the same id. Prepended, so it is set before any route writes.
 */
export function tagRequestIds(server: Server): void {
  server.prependListener('request', (_req, res) => {
    res.setHeader(REQUEST_ID_HEADER, `req_${randomIdText(12)}`);
  });
}
