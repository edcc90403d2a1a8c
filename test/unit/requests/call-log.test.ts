/**
 * A call's row is written exactly once: carried by the charge (or the job) that settles with it,
 * or, when nothing carries it, handed to the writer once the response has ended and no hold of
 * the call is still open. Its JSON is the row and nothing else.
 */
import { CallLog, type RequestLogRow } from '../../../src/domain/requests/call-log';
import { DomainError } from '../../../src/domain/errors/domain-error';
import { fakeClock } from '../../support/fake-clock';

function opened() {
  const clock = fakeClock();
  const written: RequestLogRow[] = [];
  const log = new CallLog('req_1', clock.now(), 'acct_1', 'svc_live_1', '/v1/chat/completions', 'k-1', clock, (row) => written.push(row));
  return { clock, written, log };
}

test('a refusal: written when the response ends, with its status, its error and its latency', async () => {
  const { clock, written, log } = opened();
  log.requested({ model: 'svc-chat-1', messages: [] });
  log.failed(new DomainError('insufficient_credits', 'no credits'));
  await clock.tickAsync(25);
  log.ended(402, false);
  log.ended(402, false);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ model: 'svc-chat-1', status: 402, errorType: 'insufficient_credits', errorCode: null, latencyMs: 25, creditsMicro: 0 });
});

test('a call that named no model (or one the database cannot store) is not written', () => {
  const { written, log } = opened();
  log.requested({ messages: [] });
  log.requested({ model: 'svc-\u0000chat' });
  log.ended(400, false);
  expect(written).toEqual([]);
});

test('carried by its charge: never handed to the writer, and nothing said after the carry changes it', async () => {
  const { clock, written, log } = opened();
  log.named('svc-chat-1');
  log.opened();
  log.usedTokens(7, 3);
  await clock.tickAsync(10);
  const row = log.carry();
  log.usedTokens(100, 100);
  log.failed(new Error('late'));
  log.settled();
  log.ended(200, false);
  expect(written).toEqual([]);
  expect(row).toMatchObject({ promptTokens: 7, completionTokens: 3, latencyMs: 10, errorType: null, status: 200 });
  // Its JSON is the row: the private bookkeeping stays out.
  expect(Object.keys(JSON.parse(JSON.stringify(row))).sort()).toEqual(
    [
      'id',
      'createdMs',
      'accountId',
      'keyId',
      'endpoint',
      'idempotencyKey',
      'model',
      'status',
      'creditsMicro',
      'promptTokens',
      'completionTokens',
      'images',
      'seconds',
      'latencyMs',
      'errorType',
      'errorCode',
      'jobId',
    ].sort(),
  );
});

test('a client that leaves before its stream settles: the row waits for the hold, which carries it with client_closed', () => {
  const { written, log } = opened();
  log.named('svc-chat-1');
  log.opened();
  log.ended(200, true);
  expect(written).toEqual([]);
  const row = log.carry();
  log.settled();
  expect(written).toEqual([]);
  expect(row).toMatchObject({ status: 200, errorType: 'client_closed' });
});

test('a hold settled without a charge (a test key, a failure): the writer gets the row once both have ended', () => {
  const { written, log } = opened();
  log.named('svc-chat-1');
  log.opened();
  log.ended(499, true);
  log.charged(1234);
  log.settled();
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ status: 499, errorType: 'client_closed', creditsMicro: 1234 });
});

test('a job whose transaction failed: uncarried, its row is the refusal, with nothing charged', () => {
  const { written, log } = opened();
  log.named('svc-2.5-preview-text-to-video');
  log.usedSeconds(5);
  log.charged(10_000_000);
  log.forJob('vid_1');
  log.carry();
  log.opened();
  log.uncarried();
  log.settled();
  log.failed(new DomainError('insufficient_credits', 'no'));
  log.ended(402, false);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ status: 402, creditsMicro: 0, seconds: 0, jobId: null, errorType: 'insufficient_credits' });
});

test('a job refused after its client had left: the refusal says how the response ended', () => {
  const { written, log } = opened();
  log.named('svc-2.5-preview-text-to-video');
  log.forJob('vid_1');
  log.carry();
  log.opened();
  log.ended(499, true);
  expect(written).toEqual([]);
  log.uncarried();
  log.settled();
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ status: 499, errorType: 'client_closed', jobId: null });
});
