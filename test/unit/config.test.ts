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
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'api-key'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'x=%zz'],
    ['OTEL_TRACES_SAMPLER_ARG', '2'],
    ['OTEL_BSP_SCHEDULE_DELAY', '0'],
    ['MEDIA_STORE', 'nfs'],
    ['S3_FORCE_PATH_STYLE', 'yes'],
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

  test('tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT; with it, spans go to its /v1/traces', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'svc-gateway',
      sampleRatio: 1,
      exportDelayMs: 5000,
    });
    const c = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s%3Dcret, x-team = one ',
      OTEL_SERVICE_NAME: 'gateway-eu',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '1000',
    });
    expect(c.tracing).toEqual({
      tracesUrl: 'https://otlp.example.com/otlp/v1/traces',
      headers: { 'api-key': 's=cret', 'x-team': 'one' },
      serviceName: 'gateway-eu',
      sampleRatio: 0.25,
      exportDelayMs: 1000,
    });
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

  test('buying credits: off without STRIPE_SECRET_KEY; the price as micro-dollars; both secrets or neither', () => {
    expect(loadConfig({}).stripe).toBeUndefined();
    expect(loadConfig({}).checkout).toEqual({ usdPerCreditMicro: 10_000, min: 100, max: 100_000 });
    const on = loadConfig({
      STRIPE_SECRET_KEY: 'sk_test_abc',
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
      STRIPE_API_BASE: 'http://127.0.0.1:12111/',
      CREDIT_PRICE_USD: '0.0125',
      CREDIT_PURCHASE_MIN: '40',
      CREDIT_PURCHASE_MAX: '5000',
    });
    expect(on.stripe).toEqual({ secretKey: 'sk_test_abc', webhookSecret: 'whsec_abc', apiBase: 'http://127.0.0.1:12111' });
    expect(on.checkout).toEqual({ usdPerCreditMicro: 12_500, min: 40, max: 5000 });
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_live_abc' })).toThrow(/STRIPE_WEBHOOK_SECRET: required/);
    expect(() => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_abc' })).toThrow(/STRIPE_SECRET_KEY: required/);
  });

  test.each([
    [{ STRIPE_SECRET_KEY: 'pk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_x' }, 'STRIPE_SECRET_KEY'],
    [{ STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'secret' }, 'STRIPE_WEBHOOK_SECRET'],
    [{ STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_x', STRIPE_API_BASE: 'http://127.0.0.1:1/v1' }, 'STRIPE_API_BASE'],
    [{ CREDIT_PRICE_USD: '0' }, 'CREDIT_PRICE_USD'],
    [{ CREDIT_PRICE_USD: '0.0000001' }, 'CREDIT_PRICE_USD'],
    [{ CREDIT_PRICE_USD: '$0.01' }, 'CREDIT_PRICE_USD'],
    [{ CREDIT_PURCHASE_MIN: '2.5' }, 'CREDIT_PURCHASE_MIN'],
    // 40 credits at 0.01 USD is below Stripe's 0.50 USD; min above max; a purchase above 999,999.99 USD.
    [{ CREDIT_PURCHASE_MIN: '40' }, 'CREDIT_PURCHASE_MIN'],
    [{ CREDIT_PURCHASE_MIN: '500', CREDIT_PURCHASE_MAX: '400' }, 'CREDIT_PURCHASE_MIN'],
    [{ CREDIT_PURCHASE_MAX: '100000000' }, 'CREDIT_PURCHASE_MAX'],
  ])('a wrong checkout setting %j stops start-up naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`${name}:`));
  });

  describe('media store', () => {
    const s3 = { MEDIA_STORE: 's3', S3_BUCKET: 'media' };

    test('disk under DATA_DIR by default; MEDIA_STORE=s3 takes its bucket, region us-east-1 and virtual-host style unless set', () => {
      expect(loadConfig({}).media).toEqual({ store: 'disk' });
      expect(loadConfig(s3).media).toEqual({
        store: 's3',
        s3: { bucket: 'media', region: 'us-east-1', endpoint: undefined, forcePathStyle: false, credentials: undefined },
      });
      const c = loadConfig({
        ...s3,
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_REGION: 'eu-west-3',
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_SESSION_TOKEN: 'token',
      });
      expect(c.media).toEqual({
        store: 's3',
        s3: {
          bucket: 'media',
          region: 'eu-west-3',
          endpoint: 'http://127.0.0.1:9000',
          forcePathStyle: true,
          credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
        },
      });
    });

    test.each([
      [{ MEDIA_STORE: 's3' }, /S3_BUCKET: required when MEDIA_STORE=s3/],
      [{ ...s3, S3_BUCKET: 'a/b' }, /S3_BUCKET: must be a bucket name/],
      [{ ...s3, S3_ENDPOINT: 'minio:9000' }, /S3_ENDPOINT: must be an http\(s\) URL/],
      [{ ...s3, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }, /AWS_SECRET_ACCESS_KEY: required with the other one/],
      [{ ...s3, AWS_SECRET_ACCESS_KEY: 'secret' }, /AWS_ACCESS_KEY_ID: required with the other one/],
      [{ S3_BUCKET: 'media' }, /MEDIA_STORE: must be s3 when S3_BUCKET is set/],
      [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, /MEDIA_STORE: must be s3 when S3_ENDPOINT is set/],
    ])('%j stops start-up naming the variable', (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });

    test('a secret key is never part of the refusal', () => {
      expect(() => loadConfig({ ...s3, AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' })).not.toThrow(/wJalrXUtnFEMI/);
    });
  });
});
