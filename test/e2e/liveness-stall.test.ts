/**
 * /livez on a gateway whose clock the test steps: ok while the loop turns, 503 `stalled` for a
 * minute after a stall past LIVENESS_STALL_SECONDS, while /readyz (traffic) is unaffected.
 */
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { fakeClock } from '../support/fake-clock';

const clock = fakeClock();
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ LIVENESS_STALL_SECONDS: '5', WORKER_CONCURRENCY: '0' }, { clock });
});
afterAll(async () => {
  await gw?.close();
});

test('a stall past the bound fails /livez for a minute; a shorter one never does', async () => {
  await clock.tickAsync(1_000);
  expect((await gw.api('GET', '/livez')).body).toEqual({ status: 'ok' });
  clock.stall(4_000);
  expect((await gw.api('GET', '/livez')).status).toBe(200);

  clock.stall(8_000);
  const stalled = await gw.api('GET', '/livez');
  expect(stalled.status).toBe(503);
  expect(stalled.body).toMatchObject({ status: 'stalled', agoMs: 0 });
  expect(stalled.body.stallMs).toBeGreaterThan(5_000);
  expect((await gw.api('GET', '/readyz')).status).toBe(200);

  await clock.tickAsync(60_000);
  expect((await gw.api('GET', '/livez')).body).toEqual({ status: 'ok' });
});
