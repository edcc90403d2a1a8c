import { Router, type Response } from 'express';
import type { ChatService, ChatCallInfo } from '../../domain/chat/chat-service';
import type { ChatUsage } from '../../providers/ports';
import { DomainError } from '../../domain/errors/domain-error';
import { keyOf } from '../auth';
import { toDomainError } from '../error-middleware';

const usageOf = (u: ChatUsage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens });

function chunk(info: ChatCallInfo, delta: Record<string, unknown>, finishReason: string | null) {
  return { id: info.id, object: 'chat.completion.chunk', created: info.created, model: info.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

/** Writes one SSE event, waiting for the socket to drain so a slow client cannot grow our memory. */
async function send(res: Response, data: unknown): Promise<void> {
  // A response whose client already left answers write() with false and never emits 'drain'
  // (nor 'close' again): waiting for either would hang this handler forever.
  if (!res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`) && !res.destroyed) {
    await new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
  }
}

/** Puts an already-read first result back in front of the rest of a generator. */
async function* prepend<T>(first: IteratorResult<T, unknown>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

/** POST /v1/chat/completions, plain JSON or server-sent events with `data: [DONE]`. */
export function chatRoutes(chat: ChatService): Router {
  const r = Router();
  r.post('/chat/completions', async (req, res) => {
    const key = keyOf(res);
    if (!chat.isStream(req.body)) {
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const out = await chat.complete(key, req.body, abort.signal);
      res.set(out.headers).set('x-svc-credits', String(out.costCredits));
      res.json({
        id: out.id,
        object: 'chat.completion',
        created: out.created,
        model: out.model,
        choices: [{ index: 0, message: { role: 'assistant', content: out.content, refusal: null }, logprobs: null, finish_reason: out.finishReason }],
        usage: usageOf(out.usage),
        system_fingerprint: null,
      });
      return;
    }

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const { info, items: rest } = await chat.stream(key, req.body, abort.signal);
    // Wait for the provider's first event before committing to a 200: an upstream that fails
    // before sending anything (refused, reset, timed out) is then an ordinary HTTP error
    // (502 upstream_error, nothing charged) instead of an error event inside a 200 stream.
    const items = prepend(await rest.next(), rest);
    res.status(200).set(info.headers).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    try {
      await send(res, chunk(info, { role: 'assistant', content: '' }, null));
      for await (const item of items) {
        if (abort.signal.aborted) break;
        if (item.type === 'delta') {
          await send(res, chunk(info, { content: item.text }, null));
          continue;
        }
        await send(res, chunk(info, {}, item.finishReason));
        if (info.includeUsage) await send(res, { ...chunk(info, {}, null), choices: [], usage: usageOf(item.usage) });
      }
      if (!abort.signal.aborted) await send(res, '[DONE]');
    } catch (err) {
      // Headers are gone: the error travels as an SSE event, in the same body shape as elsewhere.
      const e = toDomainError(err) ?? new DomainError('internal_error', 'The server had an error while processing the request.');
      if (!abort.signal.aborted) await send(res, { error: { message: e.message, type: e.type, code: e.code, param: e.param } });
    } finally {
      // `rest`, not `items`: a wrapper stopped before it reached `yield*` would not pass the return on.
      if (abort.signal.aborted) await rest.return(undefined);
      res.end();
    }
  });
  return r;
}
