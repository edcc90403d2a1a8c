import { CannotRenew, RenewalRefused, RenewingToken } from '../../console/src/auth/renewing-token';

/**
 * The console's renewal schedule and its guards, on fake timers (the browser tests cover the
 * flow against a real provider; these cover what a browser test cannot arrange: a skewed clock,
 * a provider that keeps failing, a gateway that refuses every new token).
 */
const jwt = (claims: Record<string, number>) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
let serial = 0;
/** A token of `lifetime` seconds issued now on the provider's clock, `skewMs` behind the browser's. */
const minted = (lifetime: number, skewMs = 0) => {
  const iat = Math.floor((Date.now() - skewMs) / 1000);
  return jwt({ iat, exp: iat + lifetime, n: serial++ });
};

beforeEach(() => vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00Z') }));
afterEach(() => vi.useRealTimers());

function renewing(refresh: () => Promise<string>, initial: string) {
  const hooks = { renewed: vi.fn(), ended: vi.fn() };
  const refreshMock = vi.fn(refresh);
  const token = new RenewingToken(initial, refreshMock, hooks);
  return { token, hooks, refresh: refreshMock };
}

test('renews a quarter of the lifetime before expiry, counted from receipt: a browser clock 10 minutes ahead costs one early renewal, not a loop', async () => {
  const skew = 600_000;
  const { token, hooks, refresh } = renewing(async () => minted(60, skew), minted(60, skew));
  token.start();
  // By this browser's clock the stored token expired long ago: renewed at once.
  await vi.advanceTimersByTimeAsync(0);
  expect(refresh).toHaveBeenCalledTimes(1);
  // Then every 45 s (60 s tokens, renewed 15 s before their end), whatever the skew.
  await vi.advanceTimersByTimeAsync(44_000);
  expect(refresh).toHaveBeenCalledTimes(1);
  await vi.advanceTimersByTimeAsync(2_000);
  expect(refresh).toHaveBeenCalledTimes(2);
  await vi.advanceTimersByTimeAsync(45_000);
  expect(refresh).toHaveBeenCalledTimes(3);
  expect(hooks.renewed).toHaveBeenCalledTimes(3);
  expect(token.current()).toBe(hooks.renewed.mock.calls[2]![0]);
  await token.stop();
});

test('an hour-long token is renewed a minute before it ends; a wall clock that jumps (a sleeping laptop) is noticed within 30 s', async () => {
  const { token, refresh } = renewing(async () => minted(3600), minted(3600));
  token.start();
  await vi.advanceTimersByTimeAsync(3_538_000);
  expect(refresh).not.toHaveBeenCalled();
  await vi.advanceTimersByTimeAsync(3_000);
  expect(refresh).toHaveBeenCalledTimes(1);
  // Timers do not run while suspended: the clock moves on, the next check sees it.
  vi.setSystemTime(Date.now() + 3_600_000);
  await vi.advanceTimersByTimeAsync(30_000);
  expect(refresh).toHaveBeenCalledTimes(2);
  await token.stop();
});

test('a token the gateway refused is renewed once; a renewed one refused in turn is not renewed again', async () => {
  const first = minted(60);
  const { token, refresh } = renewing(async () => minted(60), first);
  const second = await token.refused(first);
  expect(second).not.toBeNull();
  expect(await token.refused(first)).toBe(second);
  expect(token.mayRetry(second!)).toBe(false);
  expect(await token.refused(second!)).toBeNull();
  expect(refresh).toHaveBeenCalledTimes(1);
});

test('one renewal at a time: calls that find the token expired share it', async () => {
  const { token, refresh } = renewing(async () => minted(60), minted(60));
  await vi.advanceTimersByTimeAsync(61_000);
  const [a, b, c] = await Promise.all([token.fresh(), token.fresh(), token.refused(token.current())]);
  expect(refresh).toHaveBeenCalledTimes(1);
  expect(new Set([a, b, c]).size).toBe(1);
});

test('the provider refusing ends the sign-in once and asks nothing more', async () => {
  const first = minted(60);
  const { token, hooks, refresh } = renewing(() => Promise.reject(new RenewalRefused('invalid_grant')), first);
  token.start();
  await vi.advanceTimersByTimeAsync(46_000);
  expect(hooks.ended).toHaveBeenCalledTimes(1);
  expect(await token.refused(first)).toBeNull();
  expect(await token.fresh()).toBe(first);
  await vi.advanceTimersByTimeAsync(600_000);
  expect(refresh).toHaveBeenCalledTimes(1);
  expect(hooks.ended).toHaveBeenCalledTimes(1);
});

test('nothing to renew with: no schedule, and the refusal at expiry signs out as before', async () => {
  const first = minted(60);
  const { token, hooks, refresh } = renewing(() => Promise.reject(new CannotRenew('no refresh token')), first);
  token.start();
  await vi.advanceTimersByTimeAsync(600_000);
  expect(refresh).toHaveBeenCalledTimes(1);
  expect(await token.refused(first)).toBeNull();
  expect(hooks.ended).not.toHaveBeenCalled();
});

test('a provider out of reach is tried again after 5, 10, 20 s…; the first success resets the pace', async () => {
  let reachable = false;
  const { token, refresh } = renewing(async () => {
    if (!reachable) throw new TypeError('Failed to fetch');
    return minted(600);
  }, minted(60));
  token.start();
  await vi.advanceTimersByTimeAsync(45_000);
  expect(refresh).toHaveBeenCalledTimes(1);
  await vi.advanceTimersByTimeAsync(5_000);
  expect(refresh).toHaveBeenCalledTimes(2);
  await vi.advanceTimersByTimeAsync(9_000);
  expect(refresh).toHaveBeenCalledTimes(2);
  await vi.advanceTimersByTimeAsync(1_000);
  expect(refresh).toHaveBeenCalledTimes(3);
  reachable = true;
  await vi.advanceTimersByTimeAsync(20_000);
  expect(refresh).toHaveBeenCalledTimes(4);
  // 600 s tokens: the next renewal 540 s later (a minute before the end).
  await vi.advanceTimersByTimeAsync(539_000);
  expect(refresh).toHaveBeenCalledTimes(4);
  await vi.advanceTimersByTimeAsync(2_000);
  expect(refresh).toHaveBeenCalledTimes(5);
  await token.stop();
});
