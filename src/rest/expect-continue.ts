/**
 * `Expect: 100-continue` (curl sends it for any body over 1 MB, an image edit's upload say):
 * node answers `100 Continue` as soon as the headers arrive, so the client starts uploading
 * before anything has looked at the request, and a bad key or a declared size over the limit is
 * refused only after the upload has begun. Here the `100 Continue` goes out when the handler
 * first reads the body: a request refused before that (401, 413, 429, …) gets its final answer
 * alone, and the client never sends the body (RFC 9110 §10.1.1).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { invalidRequest } from '../domain/errors/domain-error';
import { asWritten } from '../domain/errors/field-path';
import { errorBody } from '../infra/http/error-body';
import { sendJson } from './json-response';

export function continueWhenRead(server: Server): void {
  // Any other expectation is one this server cannot meet: node answers a bare 417 with an empty
  // body; here it is the 417 in the API's error shape, naming the header (not echoing its value).
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const err = invalidRequest("The Expect header is not supported, except as '100-continue'.", [asWritten('Expect')], 'expectation_failed');
    // Its body, if the client sends one, is not read: the connection ends with this answer.
    res.shouldKeepAlive = false;
    sendJson(res, 417, {}, errorBody(err));
  });

  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const read = req._read.bind(req);
    let asked = false;
    // Answered without its body, the connection closes after the answer: the client may send the
    // body anyway or not at all, and the next request's bytes could not be told from it.
    const keepAlive = res.shouldKeepAlive;
    res.shouldKeepAlive = false;
    req._read = function readAfterContinue(this: IncomingMessage, size: number) {
      // Only while no answer has begun: node drains an unread body after a final answer, and a
      // 100 after it would be a second status line.
      if (!asked && !res.headersSent && !res.writableEnded) {
        asked = true;
        res.shouldKeepAlive = keepAlive;
        res.writeContinue();
      }
      return read.call(this, size);
    };
    server.emit('request', req, res);
  });
}
