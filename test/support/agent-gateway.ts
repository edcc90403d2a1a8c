/**
 * A test gateway whose chat model is routed to the fake OpenAI upstream (which validates like
 * OpenAI and answers tool calls and structured outputs), for the client-library tests; plus the
 * helpers those tests share.
 */
import { writeModelsFile } from './models-file';
import { FAKE_USAGE, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from './fake-openai-upstream';
import { FAKE_AGENT_USAGE } from './fake-openai-chat';
import type { TestAccount, TestGateway } from './gateway-harness';
import { useFixture } from './fixture';
import { useTestGateway } from './use-test-gateway';
import { allCallsBilled } from './billed';

export const UPSTREAM_SECRET = 'sk-upstream-agent-secret-0123';
export const UPSTREAM_CHAT_MODEL = 'up-agent-model';
/** What one fake-upstream agent answer costs: its usage at 1 credit per 10k tokens. */
export const AGENT_CALL_CREDITS = FAKE_AGENT_USAGE.total_tokens / 10_000;
/** What one plain answer costs (a request with nothing agent-like: the fake's fixed reply). */
export const PLAIN_CALL_CREDITS = FAKE_USAGE.total_tokens / 10_000;

export interface AgentRig {
  gw: TestGateway;
  upstream: FakeOpenAIUpstream;
  /** A live key on a funded account, and one on the simulator (test mode). */
  live: { account: TestAccount; secret: string };
  test: { account: TestAccount; secret: string };
  /** Requests the upstream received to /chat/completions, in order. */
  chatRequests(): any[];
  /** Checks the live account's balance moved by exactly `calls` more answers since the last check (agent answers unless told). */
  expectCharged(calls: number, creditsEach?: number): Promise<void>;
}

/**
 * The rig for a file: the fake upstream before its gateway (from useTestGateway, which checks the
 * ledger invariants after the file's tests), the accounts and keys after it.
 */
export function useAgentRig(credits = 10): AgentRig {
  let upstream: FakeOpenAIUpstream | undefined;
  let models: ReturnType<typeof writeModelsFile> | undefined;
  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    models = writeModelsFile({
      'svc-chat-1': {
        provider: 'openai-compatible',
        upstreamModel: UPSTREAM_CHAT_MODEL,
        baseUrl: upstream.url,
        apiKeyEnv: 'UPSTREAM_AGENT_KEY',
        timeoutSeconds: 5,
      },
    });
  });
  const gw = useTestGateway(() => ({ MODELS_FILE: models!.path, UPSTREAM_AGENT_KEY: UPSTREAM_SECRET }));
  afterAll(async () => {
    await upstream?.close();
    models?.remove();
  });
  return useFixture(
    'useAgentRig',
    async () => {
      const fake = upstream!;
      const liveAccount = await gw.newAccount(credits);
      let expectedBalance = credits;
      const testAccount = await gw.newAccount(0);
      return {
        gw,
        upstream: fake,
        live: { account: liveAccount, secret: (await gw.newKey(liveAccount, { name: 'live' })).secret },
        test: { account: testAccount, secret: (await gw.newKey(testAccount, { name: 'test', mode: 'test' })).secret },
        chatRequests: () => fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.json),
        async expectCharged(calls: number, creditsEach = AGENT_CALL_CREDITS) {
          expectedBalance -= calls * creditsEach;
          expect(await settledBalance(gw, liveAccount)).toBeCloseTo(expectedBalance, 9);
        },
      };
    },
    async () => undefined,
  );
}

/** Waits until every call of the account is billed, then answers the balance. */
export async function settledBalance(gw: TestGateway, account: TestAccount): Promise<number> {
  await allCallsBilled(gw, account.id);
  return gw.balance(account);
}

export const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
} as const;
