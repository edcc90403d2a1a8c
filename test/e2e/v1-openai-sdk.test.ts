import OpenAI, { toFile } from 'openai';
import type { TestAccount } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';
import { decodePng } from '../support/png';
import { makePng } from '../support/fake-openai-upstream';

const gw = useTestGateway();

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });

async function liveClient(
  credits: number,
  keyBody: Record<string, unknown> = {},
): Promise<{ acct: TestAccount; openai: OpenAI; key: { id: string; secret: string } }> {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct, keyBody);
  return { acct, openai: client(key.secret), key };
}

describe('models', () => {
  test('lists chat, 25+ image models, the edit model, four video models and motion control', async () => {
    const { openai } = await liveClient(0);
    const models: any[] = [];
    for await (const m of openai.models.list()) models.push(m);
    const byCap = (c: string) => models.filter((m) => m.capabilities.includes(c));
    expect(byCap('chat').map((m) => m.id)).toContain('svc-chat-1');
    expect(byCap('image-generation').length).toBeGreaterThanOrEqual(25);
    expect(byCap('image-edit')).toHaveLength(1);
    expect(
      byCap('video')
        .map((m) => m.id)
        .sort(),
    ).toEqual(['svc-2-7-image-to-video', 'svc-2-7-reference-to-video', 'svc-2.5-preview-image-to-video', 'svc-2.5-preview-text-to-video'].sort());
    expect(byCap('motion-control').map((m) => m.id)).toEqual(['svc-v3-motion-control']);
    const chat = models.find((m) => m.id === 'svc-chat-1');
    expect(chat).toMatchObject({ object: 'model', owned_by: expect.any(String), pricing: { credits_per_10k_tokens: 1 } });
    const image = models.find((m) => m.id === 'svc-creative-v8');
    expect(image).toMatchObject({ provider: expect.any(String), pricing: { credits_per_image: expect.any(Number) } });
    const prices = byCap('image-generation').map((m) => m.pricing.credits_per_image);
    expect(Math.min(...prices)).toBe(1);
    expect(Math.max(...prices)).toBe(9);
    // SPEC: "1 credit (specialty models)": the five creative-mode models, each.
    const specialty = models.filter((m) => m.id.startsWith('svc-creative-'));
    expect(specialty).toHaveLength(5);
    for (const m of specialty) expect([m.id, m.pricing.credits_per_image]).toEqual([m.id, 1]);
  });
});

describe('chat', () => {
  test('a completion is billed its usage at 1 credit per 10k tokens', async () => {
    const { acct, openai } = await liveClient(10);
    const res = await openai.chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'Tell me about lighthouses' }] });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0].message.content!.length).toBeGreaterThan(0);
    const { prompt_tokens, completion_tokens, total_tokens } = res.usage!;
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
    expect(await gw.balance(acct)).toBeCloseTo(10 - total_tokens / 10_000, 9);
  });

  test('a streamed completion arrives in chunks, ends with usage, and is billed the same way', async () => {
    const { acct, openai } = await liveClient(10);
    const stream = await openai.chat.completions.create({
      model: 'svc-chat-1',
      messages: [{ role: 'user', content: 'Write a short poem about the sea and the wind' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let deltas = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.delta?.content) ((text += choice.delta.content), deltas++);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(deltas).toBeGreaterThanOrEqual(3);
    expect(finish).toBe('stop');
    expect(usage).toBeDefined();
    expect(text.length).toBeGreaterThan(0);
    expect(await gw.balance(acct)).toBeCloseTo(10 - usage!.total_tokens / 10_000, 9);
  });

  test('same request streamed and not gives the same text (deterministic simulator)', async () => {
    const { openai } = await liveClient(10);
    const body = { model: 'svc-chat-1', messages: [{ role: 'user' as const, content: 'ping' }], seed: 7 };
    const plain = await openai.chat.completions.create(body);
    let streamed = '';
    for await (const c of await openai.chat.completions.create({ ...body, stream: true })) streamed += c.choices[0]?.delta?.content ?? '';
    expect(streamed).toBe(plain.choices[0].message.content);
  });

  test('an empty balance answers 402 before any call', async () => {
    const { openai } = await liveClient(0);
    await expect(openai.chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 402,
      error: { type: 'insufficient_credits' },
    });
  });

  test('a test key is served by the simulator and never changes the balance', async () => {
    const acct = await gw.newAccount(1);
    const key = await gw.newKey(acct, { mode: 'test' });
    const res = await client(key.secret).chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.usage!.total_tokens).toBeGreaterThan(0);
    const img = await client(key.secret).images.generate({ model: 'flux-pro', prompt: 'a cat', n: 2, size: '256x256' });
    expect(img.data).toHaveLength(2);
    expect(await gw.balance(acct)).toBe(1);
  });

  test('validation errors name the field', async () => {
    const { openai } = await liveClient(10);
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'svc-chat-1', messages: [] }, 'messages'],
      [{ model: 'svc-chat-1', messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      [{ model: 'svc-chat-1', messages: [{ role: 'user', content: 'x' }], temperature: 9 }, 'temperature'],
      [{ model: 'svc-chat-1', messages: [{ role: 'user', content: 'x' }], max_tokens: 10_000_000 }, 'max_tokens'],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ];
    for (const [body, param] of cases) {
      await expect(openai.chat.completions.create(body as any)).rejects.toMatchObject({ status: 400, error: { type: 'invalid_request_error', param } });
    }
    await expect(openai.chat.completions.create({ model: 'svc-creative-v8', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      error: { type: 'not_found_error', code: 'model_not_found', param: 'model' },
    });
  });
});

describe('JSON Schemas a client hands in', () => {
  test('an unknown type is a 400 naming where it is, on chat completions and responses; nothing is charged', async () => {
    const { acct, openai } = await liveClient(10);
    const misspelt = { type: 'object', properties: { a: { type: 'strng' } } };
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const refused = (param: string) => ({
      status: 400,
      error: { type: 'invalid_request_error', param, message: expect.stringContaining("'strng' is not a JSON Schema type") },
    });
    await expect(
      openai.chat.completions.create({ model: 'svc-chat-1', messages, response_format: { type: 'json_schema', json_schema: { name: 's', schema: misspelt } } }),
    ).rejects.toMatchObject(refused('response_format.json_schema.schema.properties.a.type'));
    await expect(
      openai.chat.completions.create({ model: 'svc-chat-1', messages, tools: [{ type: 'function', function: { name: 'f', parameters: misspelt } }] }),
    ).rejects.toMatchObject(refused('tools[0].function.parameters.properties.a.type'));
    await expect(
      openai.responses.create({ model: 'svc-chat-1', input: 'hi', text: { format: { type: 'json_schema', name: 's', schema: misspelt } } }),
    ).rejects.toMatchObject(refused('text.format.schema.properties.a.type'));
    await expect(
      openai.responses.create({ model: 'svc-chat-1', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: misspelt, strict: false }] }),
    ).rejects.toMatchObject(refused('tools[0].parameters.properties.a.type'));
    // The same schema spelt right is served.
    const fine = { type: 'object', properties: { a: { type: ['string', 'null'] } } };
    const ok = await openai.chat.completions.create({
      model: 'svc-chat-1',
      messages,
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: fine } },
    });
    expect(ok.choices[0].message.content).toBeTruthy();
    expect(await gw.balance(acct)).toBeCloseTo(10 - ok.usage!.total_tokens / 10_000, 9);
  });
});

describe('images', () => {
  test('url images are permanent, token-authenticated PNGs of the asked size, billed n × price', async () => {
    const { acct, openai } = await liveClient(20);
    const res = await openai.images.generate({ model: 'flux-pro', prompt: 'a lighthouse at dusk', n: 2, size: '320x200' });
    expect(res.data).toHaveLength(2);
    for (const item of res.data!) {
      expect(item.url).toMatch(new RegExp(`^${gw.url}/media/`));
      const plain = await fetch(item.url!);
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe('image/png');
      expect(decodePng(Buffer.from(await plain.arrayBuffer()))).toEqual({ width: 320, height: 200 });
      const tampered = item.url!.replace(/\/([A-Za-z0-9_-]{8})([A-Za-z0-9_-]*)\.png$/, '/AAAAAAAA$2.png');
      expect([403, 404]).toContain((await fetch(tampered)).status);
    }
    expect(await gw.balance(acct)).toBe(20 - 2 * 6);
  });

  test("size 'auto' (gpt-image's default) is the default size, 1024x1024", async () => {
    const { openai } = await liveClient(10);
    const res = await openai.images.generate({ model: 'svc-creative-v8', prompt: 'a red fox', size: 'auto', response_format: 'b64_json' });
    expect(decodePng(Buffer.from(res.data![0].b64_json!, 'base64'))).toEqual({ width: 1024, height: 1024 });
  });

  test('b64_json images decode at the asked size; the same seed gives the same bytes', async () => {
    const { acct, openai } = await liveClient(10);
    const body = { model: 'svc-creative-v8', prompt: 'a red fox', size: '1792x1024' as const, response_format: 'b64_json' as const, seed: 42 };
    const a = await openai.images.generate(body);
    const b = await openai.images.generate(body);
    const bytes = Buffer.from(a.data![0].b64_json!, 'base64');
    expect(decodePng(bytes)).toEqual({ width: 1792, height: 1024 });
    expect(b.data![0].b64_json).toBe(a.data![0].b64_json);
    expect(await gw.balance(acct)).toBe(8);
  });

  test('edits take multipart from the SDK and return a real image, billed', async () => {
    const { acct, openai } = await liveClient(10);
    const res = await openai.images.edit({
      model: 'svc-image-edit-1',
      image: await toFile(makePng(96, 64), 'input.png', { type: 'image/png' }),
      prompt: 'make it blue',
    });
    const url = res.data![0].url!;
    const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(decodePng(bytes)).toEqual({ width: 96, height: 64 });
    expect(await gw.balance(acct)).toBe(8);
  });

  test.each([0, 100])('an edit in jpeg at output_compression %i (the ends of 0–100) is a real jpeg', async (level) => {
    const { openai } = await liveClient(10);
    const res = await openai.images.edit({
      model: 'svc-image-edit-1',
      image: await toFile(makePng(32, 32), 'input.png', { type: 'image/png' }),
      prompt: 'make it blue',
      response_format: 'b64_json',
      output_format: 'jpeg',
      output_compression: level,
    });
    const bytes = Buffer.from(res.data![0].b64_json!, 'base64');
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff])); // the JPEG signature
  });

  test('a model of another kind is a 404 model_not_found that says it exists, but not here', async () => {
    const { openai } = await liveClient(10);
    const err = await openai.images
      .edit({ model: 'svc-chat-1', image: await toFile(makePng(32, 32), 'in.png', { type: 'image/png' }), prompt: 'x' })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect((err as Error).message).toContain('not for this endpoint');
  });

  test('an edit without an image names the field', async () => {
    const { key } = await liveClient(10);
    const form = new FormData();
    form.set('prompt', 'x');
    const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.param).toBe('image');
  });

  test('[policy] is refused by a standard model (422, nothing charged) but not by a creative one', async () => {
    const { acct, openai } = await liveClient(10);
    await expect(openai.images.generate({ model: 'flux-dev', prompt: 'something [policy]' })).rejects.toMatchObject({
      status: 422,
      error: { type: 'content_policy_violation' },
    });
    expect(await gw.balance(acct)).toBe(10);
    await openai.images.generate({ model: 'svc-creative-v7', prompt: 'something [policy]', size: '64x64' });
    expect(await gw.balance(acct)).toBe(9);
  });

  test('validation errors name the field', async () => {
    const { acct, openai } = await liveClient(10);
    const cases: [Record<string, unknown>, string][] = [
      [{ prompt: 'x', n: 5 }, 'n'],
      [{ prompt: 'x', size: 'big' }, 'size'],
      [{ prompt: 'x', size: '10x10' }, 'size'],
      [{ prompt: 'x', size: '9000x1024' }, 'size'],
      [{ prompt: 'x'.repeat(5001) }, 'prompt'],
      [{ prompt: '' }, 'prompt'],
      [{ prompt: 'x', response_format: 'gif' }, 'response_format'],
      [{ prompt: 'x', seed: -1 }, 'seed'],
    ];
    for (const [body, param] of cases) {
      await expect(openai.images.generate(body as any)).rejects.toMatchObject({ status: 400, error: { param } });
    }
    expect(await gw.balance(acct)).toBe(10);
  });

  test('40 concurrent image requests against a balance for 10 never overdraw', async () => {
    const { acct, openai } = await liveClient(10, {});
    // 40 requests exceed the 30/minute image limit, so use several keys of one account.
    const keys = await Promise.all([0, 1].map(() => gw.newKey(acct)));
    const clients = [openai, ...keys.map((k) => client(k.secret))];
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => clients[i % 3].images.generate({ model: 'svc-creative-v8', prompt: `tile ${i}`, size: '64x64' })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(10);
    // The balance spent (402), or, while calls in progress still held it, the 429 to retry in a second.
    for (const r of refused)
      expect([r.reason.status === 402 ? 'insufficient_credits' : r.reason.code]).toEqual([expect.stringMatching(/^(insufficient_credits|credits_in_flight)$/)]);
    expect(await gw.balance(acct)).toBe(0);
    // Settled: the balance is the reason.
    await expect(openai.images.generate({ model: 'svc-creative-v8', prompt: 'one more', size: '64x64' })).rejects.toMatchObject({ status: 402 });
    await expectLedgerInvariants(gw.gateway.database.db);
  });
});

describe('permissions, limits and caps', () => {
  test('an allow-list of the chat model forbids every image model; blocked wins over allowed', async () => {
    const { openai } = await liveClient(10, { allowedModels: ['svc-chat-1'] });
    await expect(openai.images.generate({ prompt: 'x' })).rejects.toMatchObject({ status: 403, error: { type: 'model_forbidden', param: 'model' } });
    await expect(openai.chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'x' }] })).resolves.toBeDefined();
    const both = await liveClient(10, { allowedModels: ['svc-chat-1'], blockedModels: ['svc-chat-1'] });
    await expect(both.openai.chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 403,
      error: { type: 'model_forbidden' },
    });
    const editBlocked = await liveClient(10, { blockedModels: ['svc-image-edit-1'] });
    await expect(editBlocked.openai.images.edit({ image: await toFile(makePng(64, 64), 'a.png', { type: 'image/png' }), prompt: 'x' })).rejects.toMatchObject({
      status: 403,
      error: { type: 'model_forbidden' },
    });
  });

  test('the 31st image request in a minute answers 429 with Retry-After and x-ratelimit headers', async () => {
    const { key } = await liveClient(100);
    let last: Response | undefined;
    for (let i = 0; i < 31; i++) {
      last = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-creative-v8', prompt: 'x', size: '64x64' }),
      });
      if (i === 0) {
        expect(last.headers.get('x-ratelimit-limit-requests')).toBe('30');
        expect(last.headers.get('x-ratelimit-remaining-requests')).toBe('29');
        expect(last.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
      }
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(((await last!.json()) as any).error).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
    // model listing is not counted against the image group
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } })).status).toBe(200);
  });

  test('the daily spend cap answers 429 daily_cap_exceeded with Retry-After', async () => {
    const { acct, openai } = await liveClient(100, { dailySpendCap: 10 });
    await openai.images.generate({ model: 'flux-pro', prompt: 'x', size: '64x64' }); // 6 credits
    const err = await openai.images.generate({ model: 'flux-pro', prompt: 'x', size: '64x64' }).catch((e) => e);
    expect(err.status).toBe(429);
    expect(err.error.type).toBe('daily_cap_exceeded');
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await gw.balance(acct)).toBe(94);
  });
});
