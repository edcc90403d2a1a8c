import { ConfigError, loadConfig } from '../../src/config';

describe('configuration', () => {
  test('defaults follow CONTRACT.md', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: './data',
      databaseUrl: undefined,
      redisUrl: undefined,
      adminToken: undefined,
      oidc: undefined,
      webhook: { retryDelaysSeconds: [5, 25], timeoutSeconds: 10, allowLocal: false },
      simulatorVideoSeconds: 5,
      videoJobTimeoutSeconds: 900,
      wsMaxConnectionsPerAddress: 1000,
      requestLogDays: 30,
    });
    expect(loadConfig({ REQUEST_LOG_DAYS: '0' }).requestLogDays).toBe(0);
    expect(loadConfig({ WS_MAX_CONNECTIONS_PER_ADDRESS: '0' }).wsMaxConnectionsPerAddress).toBe(0);
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, fd00::1 ,' }).trustedProxies).toEqual(['10.0.0.0/8', 'fd00::1']);
    expect(loadConfig({}).adminSubjects).toEqual([]);
    expect(loadConfig({ ADMIN_SUBJECTS: ' ops-alice, 1234567890 ,ops-alice,' }).adminSubjects).toEqual(['ops-alice', '1234567890']);
  });

  test.each([
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['WEBHOOK_RETRY_DELAYS', '5,soon'],
    ['ADMIN_TOKEN', 'short'],
    ['VIDEO_JOB_TIMEOUT_SECONDS', '-1'],
    ['WS_MAX_CONNECTIONS_PER_ADDRESS', '-1'],
    ['WS_MAX_CONNECTIONS_PER_ADDRESS', '2.5'],
    ['TRUSTED_PROXIES', '10.0.0.0/8,caddy'],
    ['ADMIN_SUBJECTS', 'ops alice'],
    ['ADMIN_SUBJECTS', `ops-${'x'.repeat(300)}`],
    ['REQUEST_LOG_DAYS', '-1'],
    ['REQUEST_LOG_DAYS', '1.5'],
  ])('a wrong %s stops start-up with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  test('the development identity provider is refused under NODE_ENV=production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/OIDC_ISSUER/);
    expect(loadConfig({ NODE_ENV: 'production', OIDC_ISSUER: 'https://id.example.com', OIDC_AUDIENCE: 'svc' }).oidc).toMatchObject({
      issuer: 'https://id.example.com',
      audience: 'svc',
      jwksUrl: undefined,
    });
  });

  test('under NODE_ENV=production an OIDC issuer needs an audience; elsewhere it may go without', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', OIDC_ISSUER: 'https://id.example.com' })).toThrow(/OIDC_AUDIENCE: required/);
    expect(loadConfig({ NODE_ENV: 'development', OIDC_ISSUER: 'https://id.example.com' }).oidc?.audience).toBeUndefined();
  });

  test('WEBHOOK_ALLOW_LOCAL=1 and custom retry delays', () => {
    const c = loadConfig({ WEBHOOK_ALLOW_LOCAL: '1', WEBHOOK_RETRY_DELAYS: '1, 2,3' });
    expect(c.webhook).toMatchObject({ allowLocal: true, retryDelaysSeconds: [1, 2, 3] });
  });

  test('a work lease shorter than the webhook timeout it guards stops start-up naming WORK_LEASE_SECONDS', () => {
    expect(() => loadConfig({ WORK_LEASE_SECONDS: '10', WEBHOOK_TIMEOUT_SECONDS: '10' })).toThrow(
      /WORK_LEASE_SECONDS \(10\) must be longer than WEBHOOK_TIMEOUT_SECONDS \(10\)/,
    );
    expect(loadConfig({ WORK_LEASE_SECONDS: '11', WEBHOOK_TIMEOUT_SECONDS: '10' }).workLeaseSeconds).toBe(11);
  });
});
