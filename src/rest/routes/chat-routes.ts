import type { ServerResponse } from 'node:http';
import { Router, type RequestHandler } from 'express';
import type { ChatService } from '../../domain/chat/chat-service';
import type { KeyPrincipal } from '../../domain/keys/principal';
import { DomainError } from '../../domain/errors/domain-error';
import { keyOf } from '../auth';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';
import { toDomainError } from '../error-middleware';
import { sendJson } from '../json-response';
import { errorBody } from '../../infra/http/error-body';
import { CHAT_BODY_LIMIT, jsonBody } from '../json-body';
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
import { chunkPrefix, chunkText, completionBody, usageChunkBody } from './chat-wire';

/** An error after the headers are gone travels as an SSE event, in the same body shape as elsewhere. */
export function streamErrorBody(err: unknown) {
  const e = toDomainError(err) ?? new DomainError('internal_error', 'The server had an error while processing the request.');
  return errorBody(e);
}

/** A /v1 POST handler on node:http types, served by the JSON lane and by Express alike. */
export type JsonPostHandler = (key: KeyPrincipal, body: unknown, res: ServerResponse) => Promise<void>;

/**
 * POST /v1/chat/completions, plain JSON or server-sent events with `data: [DONE]`. A stream
 * still running at the server's drain deadline is ended with an error event and billed what it sent.
 */
export function chatCompletionsHandler(chat: ChatService, terms: StreamTerms = {}): JsonPostHandler {
  return async (key, body, res) => {
    if (!chat.isStream(body)) {
      const abort = callLifetime(res, terms.shutdownDeadline?.());
      const out = await chat.complete(key, body, abort.signal, callOf(res), callLogOf(res)).catch(unlessCutBeforeAnswer(abort));
      sendJson(res, 200, { ...out.headers, 'x-svc-credits': String(out.costCredits) }, completionBody(out));
      return;
    }

    const abort = callLifetime(res, terms.shutdownDeadline?.());
    const { info, items: rest } = await chat.stream(key, body, abort.signal, callLogOf(res));
    // Wait for the provider's first event before committing to a 200: an upstream that fails
    // before sending anything (refused, reset, timed out) is then an ordinary HTTP error
    // (502 upstream_error, nothing charged) instead of an error event inside a 200 stream.
    let next = await rest.next();
    // Cut before the provider's first event (nothing sent, nothing charged): by the drain
    // deadline, an ordinary 503; for a client that left, nothing to write.
    if (next.done && abort.signal.aborted) {
      if (abort.cutByShutdown()) throw cutBeforeAnswer();
      return;
    }
    startEventStream(res, info.headers, terms.stallMs);
    try {
      const first = !next.done && next.value.type === 'chunk' ? next.value : undefined;
      // A choice that begins with a tool call opens with `content: null`, as OpenAI's does: the
      // AI SDK makes an empty text part of `""`, which its UIs show before the call.
      const callsFirst = (index: number) => first?.choices.some((c) => c.index === index && c.delta.tool_calls !== undefined && !c.delta.content) === true;
      const opening = Array.from({ length: info.choiceCount }, (_, index) => ({
        index,
        delta: { role: 'assistant' as const, content: callsFirst(index) ? null : '' },
        finishReason: null,
      }));
      // Queued, not written: it leaves with the headers and the first content events, in one write.
      // The provider's first chunk says what every chunk repeats (system fingerprint, service tier).
      const stamp = first?.stamp;
      const prefix = chunkPrefix(info, stamp);
      void writeEvent(res, chunkText(prefix, opening));
      let unfinishedChoices = info.choiceCount;
      // Iterated by hand, not with for-await over a wrapper: one generator hop less per event.
      for (; !next.done && !abort.signal.aborted; next = await rest.next()) {
        const item = next.value;
        if (item.type === 'chunk') {
          for (const choice of item.choices) if (choice.finishReason !== null) unfinishedChoices--;
          // Every choice has finished: what is left (the usage, [DONE]) waits for the charge, and
          // the last content leaves with it, in one write.
          if (unfinishedChoices <= 0) holdEvents(res);
          const full = writeEvent(res, chunkText(prefix, item.choices));
          if (full) await full;
          continue;
        }
        // Queued: the usage and `[DONE]` leave with the end of the response (endEventStream).
        if (info.includeUsage) void writeEvent(res, usageChunkBody(info, item.usage, stamp));
      }
      if (!abort.signal.aborted) void writeEvent(res, '[DONE]');
    } catch (err) {
      if (!abort.signal.aborted) await sendEvent(res, streamErrorBody(err));
    } finally {
      // Said in the call's row before the charge that carries it.
      if (abort.cutByShutdown()) callLogOf(res)?.failed(cutBeforeAnswer());
      // Returning the generator settles the call (prompt plus what was sent) before the error event goes out.
      if (abort.signal.aborted) await rest.return(undefined);
      if (abort.cutByShutdown()) await sendEvent(res, { error: SHUTDOWN_STREAM_ERROR });
      endEventStream(res);
    }
  };
}

/**
 * The Express route for what the JSON lane hands on (an Idempotency-Key, a query string, another
 * content type); `idempotency` runs after the parser, as it fingerprints the parsed body.
 */
export function chatRoutes(chat: ChatService, terms: StreamTerms = {}, idempotency?: RequestHandler): Router {
  const handle = chatCompletionsHandler(chat, terms);
  const r = Router();
  r.post('/chat/completions', jsonBody(CHAT_BODY_LIMIT), ...(idempotency ? [idempotency] : []), (req, res) => handle(keyOf(res), req.body, res));
  return r;
}
