import { chargeItemsJson, compactLogJson, loggedCallsJson } from '../../../src/infra/db/repositories/charge-items-json';
import type { ChargeRow } from '../../../src/domain/credits/lease-store';
import type { RequestLogRow } from '../../../src/domain/requests/call-log';

/** What svc_log_requests reads of a compact row: the item's id, account, key and model, overridden by the row's own, and 0 or null for what is missing. */
function completed(compact: Record<string, unknown>, item: ChargeRow): Omit<RequestLogRow, 'creditsMicro'> {
  return {
    id: item.requestId,
    accountId: item.accountId,
    keyId: item.keyId,
    model: item.model,
    idempotencyKey: null,
    promptTokens: 0,
    completionTokens: 0,
    images: 0,
    seconds: 0,
    latencyMs: 0,
    errorType: null,
    errorCode: null,
    jobId: null,
    ...(compact as Partial<RequestLogRow>),
  } as Omit<RequestLogRow, 'creditsMicro'>;
}

const awkward = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'ünïcødé ✓ 🎬', '\u2028\u2029', '', '{"json":true}'];
let seed = 7;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)];
const maybe = <T>(v: T): T | null => (rand(2) === 0 ? null : v);
const count = () => (rand(3) === 0 ? 0 : rand(100_000));

function randomCharge(i: number): ChargeRow {
  const item = {
    requestId: `req_${i}_${pick(awkward)}`,
    leaseId: `lease_${rand(5)}`,
    accountId: `acct_${rand(3)}`,
    keyId: `key_${rand(4)}`,
    model: maybe(pick(['svc-chat', 'model "quoted"', 'ünï'])),
    leaseMicro: rand(10_000_000),
    excessMicro: rand(2) ? 0 : rand(1_000_000),
    ...(rand(3) === 0 ? { waivedMicro: rand(1000) } : {}),
  };
  const log: RequestLogRow = {
    // Most rows name the item's id, account, key and model; some do not, and must keep their own.
    id: rand(5) ? item.requestId : `other_${i}`,
    accountId: rand(5) ? item.accountId : 'acct_other',
    keyId: rand(5) ? item.keyId : 'key_other',
    model: rand(5) ? item.model : maybe('model-of-the-row'),
    createdMs: 1_790_000_000_000 + rand(1_000_000),
    endpoint: pick(['/v1/chat/completions', '/v1/responses', '/v1/images/generations']),
    idempotencyKey: maybe(pick(awkward)),
    status: pick([200, 400, 402, 429, 499, 502]),
    creditsMicro: rand(1000),
    promptTokens: count(),
    completionTokens: count(),
    images: count(),
    seconds: count(),
    latencyMs: count(),
    errorType: maybe(pick(awkward)),
    errorCode: maybe(pick(awkward)),
    jobId: maybe(`job_${pick(awkward)}`),
  };
  return { ...item, ...(rand(4) === 0 ? {} : { log }) };
}

test('the items are valid JSON carrying every charge field, and each log row, completed from its item, is the row (its credits aside)', () => {
  const rows = Array.from({ length: 500 }, (_, i) => randomCharge(i));
  const items = JSON.parse(chargeItemsJson(rows)) as Array<Record<string, unknown>>;
  expect(items).toHaveLength(rows.length);
  items.forEach((item, i) => {
    const r = rows[i];
    expect(item).toMatchObject({
      request_id: r.requestId,
      lease_id: r.leaseId,
      account_id: r.accountId,
      api_key_id: r.keyId,
      model: r.model,
      lease_micro: r.leaseMicro,
      excess_micro: r.excessMicro,
      waived_micro: r.waivedMicro ?? 0,
    });
    if (!r.log) return expect(item.log).toBeNull();
    const { creditsMicro, ...rest } = r.log;
    void creditsMicro;
    const log = item.log as Record<string, unknown>;
    // The credits are the charge's, set by the function: the row never names them.
    expect(log).not.toHaveProperty('creditsMicro');
    expect(completed(log, r)).toEqual(rest);
  });
});

test('a row of the common call carries only what the charge item does not say', () => {
  const charge = { requestId: 'req_1', accountId: 'acct_1', keyId: 'key_1', model: 'svc-chat' };
  const log: RequestLogRow = {
    ...{ id: 'req_1', accountId: 'acct_1', keyId: 'key_1', model: 'svc-chat' },
    createdMs: 1_790_000_000_000,
    endpoint: '/v1/chat/completions',
    idempotencyKey: null,
    status: 200,
    creditsMicro: 2_000,
    promptTokens: 12,
    completionTokens: 30,
    images: 0,
    seconds: 0,
    latencyMs: 3,
    errorType: null,
    errorCode: null,
    jobId: null,
  };
  expect(JSON.parse(compactLogJson(log, charge))).toEqual({
    createdMs: 1_790_000_000_000,
    endpoint: '/v1/chat/completions',
    status: 200,
    promptTokens: 12,
    completionTokens: 30,
    latencyMs: 3,
  });
});

test('rows written without a charge are logged calls with their own credits, and read back as the rows', () => {
  const rows = Array.from({ length: 200 }, (_, i) => randomCharge(i).log).filter((r): r is RequestLogRow => r !== undefined);
  const calls = JSON.parse(loggedCallsJson(rows)) as Array<Record<string, unknown>>;
  expect(calls).toHaveLength(rows.length);
  calls.forEach((call, i) => {
    const row = rows[i];
    expect(call).toMatchObject({ request_id: row.id, account_id: row.accountId, api_key_id: row.keyId, model: row.model, credits_micro: row.creditsMicro });
    const { creditsMicro, ...rest } = row;
    void creditsMicro;
    const item = { requestId: row.id, accountId: row.accountId, keyId: row.keyId, model: row.model } as ChargeRow;
    expect(completed(call.log as Record<string, unknown>, item)).toEqual(rest);
  });
  expect(loggedCallsJson([])).toBe('[]');
});
