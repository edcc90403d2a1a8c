import { Router } from 'express';
import type { ResponsesService } from '../../domain/chat/responses/responses-service';
import { responsesParam } from '../../domain/chat/responses/responses-to-chat';
import { DomainError } from '../../domain/errors/domain-error';
import { keyOf } from '../auth';
import { toDomainError } from '../error-middleware';
import { callLifetime, prepend, sendEvent, SHUTDOWN_STREAM_ERROR, startEventStream } from '../sse/sse-writer';

/** POST /v1/responses (JSON or the Responses event stream), GET and DELETE /v1/responses/:id. */
export function responsesRoutes(responses: ResponsesService, shutdownDeadline?: () => AbortSignal): Router {
  const r = Router();
  r.post('/responses', async (req, res) => {
    const key = keyOf(res);
    if (!responses.isStream(req.body)) {
      const abort = callLifetime(res);
      const out = await responses.create(key, req.body, abort.signal);
      res.set(out.headers).set('x-svc-credits', String(out.costCredits)).json(out.response);
      return;
    }
    const abort = callLifetime(res, shutdownDeadline?.());
    const { headers, events: rest, translator, origins } = await responses.stream(key, req.body, abort.signal);
    // As for chat: an upstream that fails before its first byte is an ordinary HTTP error.
    const events = prepend(await rest.next(), rest);
    startEventStream(res, headers);
    try {
      for await (const event of events) {
        if (abort.signal.aborted) break;
        await sendEvent(res, event, event.type);
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        const e = toDomainError(err) ?? new DomainError('internal_error', 'The server had an error while processing the request.');
        const event = translator.error(e.type, e.message, e.param ? responsesParam(e.param, origins) : null, e.code);
        await sendEvent(res, event, 'error');
      }
    } finally {
      if (abort.signal.aborted) await rest.return(undefined);
      if (abort.cutByShutdown()) {
        const { type, message, param, code } = SHUTDOWN_STREAM_ERROR;
        await sendEvent(res, translator.error(type, message, param, code), 'error');
      }
      res.end();
    }
  });
  r.get('/responses/:id', async (req, res) => {
    res.json(await responses.retrieve(keyOf(res), String(req.params.id)));
  });
  r.delete('/responses/:id', async (req, res) => {
    res.json(await responses.delete(keyOf(res), String(req.params.id)));
  });
  return r;
}
