import { Router, type RequestHandler } from 'express';
import type { ResponsesService } from '../../domain/chat/responses/responses-service';
import { DomainError } from '../../domain/errors/domain-error';
import { keyOf } from '../auth';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';
import { toDomainError } from '../error-middleware';
import { sendJson } from '../json-response';
import { CHAT_BODY_LIMIT, jsonBody } from '../json-body';
import type { JsonPostHandler } from './chat-routes';
import {
  callLifetime,
  cutBeforeAnswer,
  unlessCutBeforeAnswer,
  endEventStream,
  holdEvents,
  sendEvent,
  SHUTDOWN_STREAM_ERROR,
  startEventStream,
  writeEvent,
  type StreamTerms,
} from '../sse/sse-writer';

/** POST /v1/responses, JSON or the Responses event stream (served by the JSON lane and by Express alike). */
export function createResponseHandler(responses: ResponsesService, terms: StreamTerms = {}): JsonPostHandler {
  return async (key, body, res) => {
    if (!responses.isStream(body)) {
      const abort = callLifetime(res, terms.shutdownDeadline?.());
      const out = await responses.create(key, body, abort.signal, callOf(res), callLogOf(res)).catch(unlessCutBeforeAnswer(abort));
      sendJson(res, 200, { ...out.headers, 'x-svc-credits': String(out.costCredits) }, out.response);
      return;
    }
    const abort = callLifetime(res, terms.shutdownDeadline?.());
    // As for chat: an upstream that fails before its first byte is an ordinary HTTP error.
    const { headers, first, events: rest, translator } = await responses.stream(key, body, abort.signal, callLogOf(res)).catch(unlessCutBeforeAnswer(abort));
    let next = first;
    // Cut before the provider's first event (nothing sent, nothing charged): by the drain
    // deadline, an ordinary 503; for a client that left, nothing to write.
    if (next.done && abort.signal.aborted) {
      if (abort.cutByShutdown()) throw cutBeforeAnswer();
      return;
    }
    startEventStream(res, headers, terms.stallMs);
    try {
      for (; !next.done && !abort.signal.aborted; next = await rest.next()) {
        // As for chat: once the answer has finished, its last events leave with its end, in one write.
        if (translator.finished) holdEvents(res);
        const full = writeEvent(res, next.value, next.value.type);
        if (full) await full;
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        // As OpenAI ends a stream that fails: response.failed, and nothing after it.
        const e = toDomainError(err) ?? new DomainError('internal_error', 'The server had an error while processing the request.');
        await sendEvent(res, translator.failed(e.type, e.message), 'response.failed');
      }
    } finally {
      // Said in the call's row before the charge that carries it.
      if (abort.cutByShutdown()) callLogOf(res)?.failed(cutBeforeAnswer());
      if (abort.signal.aborted) await rest.return(undefined);
      if (abort.cutByShutdown()) {
        const { type, message, param, code } = SHUTDOWN_STREAM_ERROR;
        await sendEvent(res, translator.error(type, message, param, code), 'error');
      }
      endEventStream(res);
    }
  };
}

/**
 * POST /v1/responses (what the JSON lane hands on: an Idempotency-Key among others, honoured as on
 * chat), GET and DELETE /v1/responses/:id, its input items, cancel, and input-token counting.
 */
export function responsesRoutes(responses: ResponsesService, terms: StreamTerms = {}, idempotency?: RequestHandler): Router {
  const create = createResponseHandler(responses, terms);
  const r = Router();
  r.post('/responses', jsonBody(CHAT_BODY_LIMIT), ...(idempotency ? [idempotency] : []), (req, res) => create(keyOf(res), req.body, res));
  r.post('/responses/input_tokens', jsonBody(CHAT_BODY_LIMIT), async (req, res) => {
    res.json(await responses.countInputTokens(keyOf(res), req.body));
  });
  r.get('/responses/:id/input_items', async (req, res) => {
    res.json(await responses.inputItems(keyOf(res), String(req.params.id), { ...req.query }));
  });
  r.post('/responses/:id/cancel', async (req, res) => {
    await responses.cancel(keyOf(res), String(req.params.id));
  });
  r.get('/responses/:id', async (req, res) => {
    res.json(await responses.retrieve(keyOf(res), String(req.params.id), { ...req.query }));
  });
  r.delete('/responses/:id', async (req, res) => {
    res.json(await responses.delete(keyOf(res), String(req.params.id)));
  });
  return r;
}
