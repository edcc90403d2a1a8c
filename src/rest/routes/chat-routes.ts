import { Router } from 'express';
import type { ChatService } from '../../domain/chat/chat-service';
import { DomainError } from '../../domain/errors/domain-error';
import { keyOf } from '../auth';
import { toDomainError } from '../error-middleware';
import { callLifetime, prepend, sendEvent, SHUTDOWN_STREAM_ERROR, startEventStream } from '../sse/sse-writer';
import { chunkBody, completionBody, usageChunkBody } from './chat-wire';

/** An error after the headers are gone travels as an SSE event, in the same body shape as elsewhere. */
export function streamErrorBody(err: unknown) {
  const e = toDomainError(err) ?? new DomainError('internal_error', 'The server had an error while processing the request.');
  return { error: { message: e.message, type: e.type, code: e.code, param: e.param } };
}

/**
 * POST /v1/chat/completions, plain JSON or server-sent events with `data: [DONE]`. A stream
 * still running at the server's drain deadline is ended with an error event and billed what it sent.
 */
export function chatRoutes(chat: ChatService, shutdownDeadline?: () => AbortSignal): Router {
  const r = Router();
  r.post('/chat/completions', async (req, res) => {
    const key = keyOf(res);
    if (!chat.isStream(req.body)) {
      const abort = callLifetime(res);
      const out = await chat.complete(key, req.body, abort.signal);
      res.set(out.headers).set('x-svc-credits', String(out.costCredits));
      res.json(completionBody(out));
      return;
    }

    const abort = callLifetime(res, shutdownDeadline?.());
    const { info, items: rest } = await chat.stream(key, req.body, abort.signal);
    // Wait for the provider's first event before committing to a 200: an upstream that fails
    // before sending anything (refused, reset, timed out) is then an ordinary HTTP error
    // (502 upstream_error, nothing charged) instead of an error event inside a 200 stream.
    const items = prepend(await rest.next(), rest);
    startEventStream(res, info.headers);
    try {
      const opening = Array.from({ length: info.choiceCount }, (_, index) => ({ index, delta: { role: 'assistant' as const, content: '' }, finishReason: null }));
      await sendEvent(res, chunkBody(info, opening));
      for await (const item of items) {
        if (abort.signal.aborted) break;
        if (item.type === 'chunk') {
          await sendEvent(res, chunkBody(info, item.choices));
          continue;
        }
        if (info.includeUsage) await sendEvent(res, usageChunkBody(info, item.usage));
      }
      if (!abort.signal.aborted) await sendEvent(res, '[DONE]');
    } catch (err) {
      if (!abort.signal.aborted) await sendEvent(res, streamErrorBody(err));
    } finally {
      // `rest`, not `items`: a wrapper stopped before it reached `yield*` would not pass the return on.
      // Returning it settles the call (prompt plus what was sent) before the error event goes out.
      if (abort.signal.aborted) await rest.return(undefined);
      if (abort.cutByShutdown()) await sendEvent(res, { error: SHUTDOWN_STREAM_ERROR });
      res.end();
    }
  });
  return r;
}
