/**
 * The Responses service on its own, over the chat service and in-memory fakes: a response is
 * charged once, as a chat call is; it is stored (unless `store: false`) and read, continued,
 * referenced, cancelled or deleted only by its own account; a failed call stores and charges
 * nothing; refusals speak the Responses request's names.
 */
import { ChatService } from '../../../src/domain/chat/chat-service';
import { textOfContent, type ChatMessage } from '../../../src/domain/chat/chat-port';
import { ResponsesService } from '../../../src/domain/chat/responses/responses-service';
import { upstreamError } from '../../../src/domain/errors/domain-error';
import { CallAbort } from '../../../src/domain/shared/call-signal';
import { fakeBilling } from '../../support/fakes/billing';
import { testCatalog } from '../../support/fakes/catalog';
import { FakeChatProviders, finish, stopChunk, textAnswer, textChunk } from '../../support/fakes/chat-provider';
import { liveKey, testKey } from '../../support/fakes/principals';
import { FakeRateLimiter } from '../../support/fakes/rate-limiter';
import { FakeResponseStore } from '../../support/fakes/response-store';
import { FakeUrlGuard } from '../../support/fakes/url-guard';

function setup() {
  const { billing, book } = fakeBilling();
  const providers = new FakeChatProviders();
  const limiter = new FakeRateLimiter();
  const chat = new ChatService(testCatalog(), providers, billing, limiter, new FakeUrlGuard());
  const store = new FakeResponseStore();
  const responses = new ResponsesService(chat, store.asStore());
  return { responses, book, limiter, store, provider: providers.live, simulator: providers.test };
}

/** Another key of the same account, and a key of another account. */
const sameAccount = liveKey({ keyId: 'svc_live_bbbbbbbbbbbbbbbb' });
const otherAccount = liveKey({ keyId: 'svc_live_cccccccccccccccc', accountId: 'acct_b' });

/** The conversation a chat request carried, as `role: text` lines. */
const turns = (messages: ChatMessage[]) => messages.map((m) => `${m.role}: ${textOfContent(m.content)}`);

describe('a response', () => {
  test('is charged its usage once, and answered as a completed response', async () => {
    const { responses, book, provider } = setup();
    provider.answers(textAnswer('Paris.', { promptTokens: 10, completionTokens: 2 }));
    const { response, costCredits, headers } = await responses.create(liveKey(), { model: 'chat-a', input: 'The capital of France?' });
    expect(costCredits).toBe(0.012);
    expect(book.commits).toEqual([expect.objectContaining({ model: 'chat-a', costMicro: 12_000, chargedMicro: 12_000 })]);
    expect(book.releases).toEqual([]);
    expect(headers['x-ratelimit-remaining-requests']).toBe('59');
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'chat-a',
      usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
    });
    expect(response.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ text: 'Paris.' })] })]);
    expect(turns(provider.requests[0].messages)).toEqual(['user: The capital of France?']);
  });

  test('is stored and read back by any key of its account, and by no other account', async () => {
    const { responses } = setup();
    const { response } = await responses.create(liveKey(), { model: 'chat-a', input: 'Hello' });
    await expect(responses.retrieve(liveKey(), response.id)).resolves.toEqual(response);
    await expect(responses.retrieve(sameAccount, response.id)).resolves.toEqual(response);
    await expect(responses.retrieve(otherAccount, response.id)).rejects.toMatchObject({
      type: 'not_found_error',
      code: 'response_not_found',
      param: 'response_id',
    });
    await expect(responses.inputItems(otherAccount, response.id, {})).rejects.toMatchObject({ code: 'response_not_found' });
  });

  test('with store: false is answered and charged but kept nowhere', async () => {
    const { responses, book, store } = setup();
    const { response } = await responses.create(liveKey(), { model: 'chat-a', input: 'Hello', store: false });
    expect(response.store).toBe(false);
    expect(book.commits).toHaveLength(1);
    expect(store.size).toBe(0);
    await expect(responses.retrieve(liveKey(), response.id)).rejects.toMatchObject({ code: 'response_not_found' });
  });

  test('of a test key moves no credit but says what it would have cost, and is stored', async () => {
    const { responses, book, simulator } = setup();
    simulator.answers(textAnswer('Simulated.', { promptTokens: 3, completionTokens: 2 }));
    const { response, costCredits } = await responses.create(testKey(), { model: 'chat-a', input: 'Hello' });
    expect(costCredits).toBe(0.005);
    expect([book.holds, book.commits]).toEqual([[], []]);
    await expect(responses.retrieve(testKey(), response.id)).resolves.toEqual(response);
  });

  test('whose provider fails is the error: nothing charged, nothing stored', async () => {
    const { responses, book, store, provider } = setup();
    const failure = upstreamError();
    provider.fails(failure);
    await expect(responses.create(liveKey(), { model: 'chat-a', input: 'Hello' })).rejects.toBe(failure);
    expect(book.commits).toEqual([]);
    expect(book.releases).toHaveLength(1);
    expect(store.size).toBe(0);
  });

  test('refusals name the Responses fields: max_output_tokens past the model’s output, before any hold', async () => {
    const { responses, book, provider } = setup();
    await expect(responses.create(liveKey(), { model: 'chat-a', input: 'Hello', max_output_tokens: 100_000 })).rejects.toMatchObject({
      type: 'invalid_request_error',
      param: 'max_output_tokens',
      message: expect.stringContaining('max_output_tokens is too large'),
    });
    expect([provider.requests, book.holds]).toEqual([[], []]);
  });
});

describe('previous_response_id', () => {
  test('continues the stored conversation: the provider is sent the earlier turns, then the new input', async () => {
    const { responses, book, provider } = setup();
    provider.answers(textAnswer('Paris.'));
    const first = await responses.create(liveKey(), { model: 'chat-a', input: 'The capital of France?' });
    provider.answers(textAnswer('About 2 million.'));
    const second = await responses.create(sameAccount, { model: 'chat-a', input: 'And its population?', previous_response_id: first.response.id });

    expect(second.response.previous_response_id).toBe(first.response.id);
    expect(turns(provider.requests[1].messages)).toEqual(['user: The capital of France?', 'assistant: Paris.', 'user: And its population?']);
    const items = await responses.inputItems(liveKey(), second.response.id, { order: 'asc' });
    expect(items.data.map((i) => [i.role, (i.content as Array<{ text: string }>)[0].text])).toEqual([
      ['user', 'The capital of France?'],
      ['assistant', 'Paris.'],
      ['user', 'And its population?'],
    ]);
    expect(book.commits).toHaveLength(2);
  });

  test.each([
    ['of another account', 'other'],
    ['that does not exist', 'missing'],
  ])('%s is a 404 naming it, before any hold or provider call', async (_what, which) => {
    const { responses, book, provider } = setup();
    const theirs = await responses.create(otherAccount, { model: 'chat-a', input: 'A secret' });
    const id = which === 'other' ? theirs.response.id : 'resp_0000';
    await expect(responses.create(liveKey(), { model: 'chat-a', input: 'Go on', previous_response_id: id })).rejects.toMatchObject({
      type: 'not_found_error',
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
    expect([provider.requests.length, book.holds.length]).toEqual([1, 1]);
  });
});

describe('item_reference', () => {
  test('resolves an output item of the account’s own stored response', async () => {
    const { responses, provider } = setup();
    provider.answers(textAnswer('Paris.'));
    const first = await responses.create(liveKey(), { model: 'chat-a', input: 'The capital of France?' });
    const itemId = first.response.output[0].id;
    await responses.create(liveKey(), {
      model: 'chat-a',
      input: [
        { type: 'item_reference', id: itemId },
        { role: 'user', content: 'Why?' },
      ],
    });
    expect(turns(provider.requests[1].messages)).toEqual(['assistant: Paris.', 'user: Why?']);
  });

  test('to another account’s item is a 404 naming the input item', async () => {
    const { responses, provider } = setup();
    const theirs = await responses.create(otherAccount, { model: 'chat-a', input: 'A secret' });
    const input = [
      { role: 'user', content: 'Hi' },
      { type: 'item_reference', id: theirs.response.output[0].id },
    ];
    await expect(responses.create(liveKey(), { model: 'chat-a', input })).rejects.toMatchObject({ code: 'item_not_found', param: 'input[1].id' });
    expect(provider.requests).toHaveLength(1);
  });
});

describe('cancel and delete', () => {
  test('cancelling a stored response is a 400 response_not_cancellable; another account’s, a 404', async () => {
    const { responses } = setup();
    const { response } = await responses.create(liveKey(), { model: 'chat-a', input: 'Hello' });
    await expect(responses.cancel(liveKey(), response.id)).rejects.toMatchObject({ type: 'invalid_request_error', code: 'response_not_cancellable' });
    await expect(responses.cancel(otherAccount, response.id)).rejects.toMatchObject({ code: 'response_not_found' });
    await expect(responses.retrieve(liveKey(), response.id)).resolves.toEqual(response);
  });

  test('a deleted response can no longer be read or continued', async () => {
    const { responses } = setup();
    const { response } = await responses.create(liveKey(), { model: 'chat-a', input: 'Hello' });
    await expect(responses.delete(sameAccount, response.id)).resolves.toEqual({ id: response.id, object: 'response', deleted: true });
    await expect(responses.retrieve(liveKey(), response.id)).rejects.toMatchObject({ code: 'response_not_found' });
    await expect(responses.create(liveKey(), { model: 'chat-a', input: 'More', previous_response_id: response.id })).rejects.toMatchObject({
      code: 'previous_response_not_found',
    });
    await expect(responses.delete(liveKey(), response.id)).rejects.toMatchObject({ code: 'response_not_found' });
  });

  test('another account cannot delete it: a 404, and the response stays', async () => {
    const { responses } = setup();
    const { response } = await responses.create(liveKey(), { model: 'chat-a', input: 'Hello' });
    await expect(responses.delete(otherAccount, response.id)).rejects.toMatchObject({ type: 'not_found_error', code: 'response_not_found' });
    await expect(responses.retrieve(liveKey(), response.id)).resolves.toEqual(response);
  });
});

describe('a streamed response', () => {
  test('opens with response.created, is charged once, and is stored as it completed', async () => {
    const { responses, book, provider } = setup();
    provider.streams([textChunk('Par'), textChunk('is.'), stopChunk(), finish({ promptTokens: 10, completionTokens: 2 })]);
    const { first, events } = await responses.stream(liveKey(), { model: 'chat-a', input: 'The capital of France?', stream: true }, new CallAbort());
    expect(first.value).toMatchObject({ type: 'response.created', response: { status: 'in_progress' } });
    const rest = [];
    for await (const event of events) rest.push(event);
    const completed = rest.at(-1)!;
    expect(completed).toMatchObject({ type: 'response.completed', response: { status: 'completed', usage: { total_tokens: 12 } } });
    expect(book.commits).toEqual([expect.objectContaining({ costMicro: 12_000 })]);
    const id = (completed.response as { id: string }).id;
    await expect(responses.retrieve(liveKey(), id)).resolves.toEqual(completed.response);
    await expect(responses.retrieve(otherAccount, id)).rejects.toMatchObject({ code: 'response_not_found' });
  });

  test('whose provider fails before its first event is an ordinary error: nothing charged, nothing stored', async () => {
    const { responses, book, store, provider } = setup();
    const failure = upstreamError();
    provider.streams([], { fail: failure });
    await expect(responses.stream(liveKey(), { model: 'chat-a', input: 'Hello', stream: true }, new CallAbort())).rejects.toBe(failure);
    expect([book.commits, book.releases.length, store.size]).toEqual([[], 1, 0]);
  });
});

test('input_tokens counts the input free of charge, against the chat rate limit', async () => {
  const { responses, book, limiter, provider } = setup();
  const out = await responses.countInputTokens(liveKey(), { model: 'chat-a', input: 'The capital of France?' });
  expect(out).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) });
  expect(out.input_tokens).toBeGreaterThan(0);
  expect([provider.requests, book.holds]).toEqual([[], []]);
  expect(limiter.consumed).toEqual([{ keyId: liveKey().keyId, group: 'chat' }]);
});
