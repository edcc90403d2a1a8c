import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { createGateway, type Gateway } from '../../src/gateway';
import { newTestStore } from './test-store';
import { checkExchange } from './openapi-check';
import type { Clock } from '../../src/domain/ports/clock';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestAccount {
  id: string;
  idToken: string;
  subject: string;
}

export interface TestGateway {
  gateway: Gateway;
  url: string;
  api<T = any>(
    method: string,
    path: string,
    opts?: {
      token?: string;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
      /** A request sent to break the rules: only its answer is checked against docs/openapi.yaml (see openapi-check.ts). */
      unchecked?: boolean;
    },
  ): Promise<ApiResponse<T>>;
  /** A fresh account (its own ID token) with `credits` granted by the operator endpoint. */
  newAccount(credits?: number): Promise<TestAccount>;
  /** Creates a key and answers its secret. */
  newKey(account: TestAccount, body?: Record<string, unknown>): Promise<{ id: string; secret: string }>;
  balance(account: TestAccount): Promise<number>;
  close(): Promise<void>;
}

/** `clock`: what the gateway's services keep time with (a fake clock the test steps; the system's by default). */
export async function startTestGateway(env: Record<string, string | undefined> = {}, options: { clock?: Clock } = {}): Promise<TestGateway> {
  // Each gateway gets a database of its own, a copy of the run's migrated one (test-store.ts).
  const store = await newTestStore('test', { seed: env.DATA_DIR === undefined });
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: store.dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: store.databaseUrl,
    REDIS_URL: process.env.REDIS_URL,
    ...env,
  });
  const gateway = await createGateway(config, { clock: options.clock });
  const url = await gateway.listen();

  const api: TestGateway['api'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    } else if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    // Every exchange is one docs/openapi.yaml describes; a redirect followed is judged by its last answer.
    const last = res.redirected ? new URL(res.url) : undefined;
    checkExchange(
      {
        method: last ? 'GET' : method,
        target: last ? last.pathname + last.search : path,
        requestHeaders: headers,
        requestBody: last ? undefined : body,
        status: res.status,
        responseHeaders: res.headers,
        responseBody: text,
      },
      { unchecked: opts.unchecked },
    );
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };

  const harness: TestGateway = {
    gateway,
    url,
    api,
    async newAccount(credits = 0) {
      const subject = `user-${randomBytes(6).toString('hex')}`;
      const idToken = await gateway.devIdentity!.issue(subject);
      const me = await api('GET', '/account', { token: idToken });
      if (me.status !== 200) throw new Error(`account creation failed: ${me.status} ${JSON.stringify(me.body)}`);
      if (credits !== 0) {
        const g = await api('POST', `/admin/accounts/${me.body.id}/credits`, { token: ADMIN_TOKEN, body: { credits, reason: 'test' } });
        if (g.status !== 200) throw new Error(`grant failed: ${g.status}`);
      }
      return { id: me.body.id, idToken, subject };
    },
    async newKey(account, body = {}) {
      const res = await api('POST', '/account/api-keys', { token: account.idToken, body });
      if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.id, secret: res.body.key };
    },
    async balance(account) {
      const res = await api('GET', '/account', { token: account.idToken });
      return res.body.balance as number;
    },
    async close() {
      await gateway.close();
      await store.remove();
    },
  };
  return harness;
}
