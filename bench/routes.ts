/**
 * The upstream-routes phase: what several routes cost, and what a failing one costs the client.
 * Non-streamed chat at c=32, the gateway only, in interleaved rounds:
 * - `svc-chat-1`: the benchmarked model on its one route;
 * - `svc-chat-two-routes`: the same upstream as two routes (two key pools) of one priority, both
 *   healthy: throughput within 5% of the one route;
 * - `svc-chat-flaky`: two routes, one of which answers 500 to every other call: every client call
 *   must still be answered 200, charged once (the money is checked after each).
 */
import type { CatalogInput } from '../src/domain/catalog/model';
import type { LoadJob, PhaseResult } from './phase';

const route = (id: string, baseUrl: string, apiKeyEnv: string) => ({
  id,
  provider: 'openai-compatible' as const,
  upstreamModel: 'bench-chat',
  baseUrl,
  apiKeyEnv,
  timeoutSeconds: 30,
});

/** The phase's two models, beside the benchmarked one. */
export function routeModels(upstreamUrl: string): CatalogInput['models'] {
  const chat = { group: 'chat' as const, ownedBy: 'svc', creditsPer10kTokens: 1 };
  return [
    {
      ...chat,
      id: 'svc-chat-two-routes',
      routes: [route('bench-pool-1', `${upstreamUrl}/v1`, 'BENCH_UPSTREAM_KEY'), route('bench-pool-2', `${upstreamUrl}/v1`, 'BENCH_UPSTREAM_KEY_2')],
    },
    {
      ...chat,
      id: 'svc-chat-flaky',
      routes: [route('bench-flaky', `${upstreamUrl}/flaky/v1`, 'BENCH_UPSTREAM_KEY'), route('bench-steady', `${upstreamUrl}/v1`, 'BENCH_UPSTREAM_KEY_2')],
    },
  ];
}

export interface RoutesResult {
  oneRoute: PhaseResult;
  twoRoutes: PhaseResult;
  flaky: PhaseResult;
  /** Two healthy routes' req/s over the one route's (the target: ≥ 0.95). */
  twoRoutesRatio: number;
  /** Client calls of the flaky model answered anything but 200 (the target: 0). */
  flakyNot200: number;
}

export function routesJobs(gatewayUrl: string, keys: string[], seconds: number, connections: number): Record<'oneRoute' | 'twoRoutes' | 'flaky', LoadJob> {
  const messages = [{ role: 'user', content: 'Say hello in five words.' }];
  const job = (id: string, model: string): LoadJob => ({
    id,
    title: `gateway, ${model}, non-streamed, c=${connections}`,
    target: 'gateway',
    url: gatewayUrl,
    keys,
    collectCharges: true,
    streamed: false,
    body: JSON.stringify({ model, messages, max_tokens: 16 }),
    expectInBody: '"chat.completion"',
    path: '/v1/chat/completions',
    connections,
    durationSeconds: seconds,
  });
  return { oneRoute: job('routes-one', 'svc-chat-1'), twoRoutes: job('routes-two', 'svc-chat-two-routes'), flaky: job('routes-flaky', 'svc-chat-flaky') };
}

export function renderRoutesMarkdown(r: RoutesResult): string {
  const row = (name: string, p: PhaseResult) =>
    `| ${name} | ${p.requestsPerSecond.toFixed(0)} | ${p.latencyMs.p50.toFixed(2)} | ${p.latencyMs.p99.toFixed(2)} | ${JSON.stringify(p.statusCodes)} |`;
  return [
    '',
    '## Upstream routes',
    '',
    'Non-streamed chat at c=32, the gateway only, rounds interleaved; money checked after each.',
    '',
    '| model | req/s | p50 ms | p99 ms | statuses |',
    '|---|---:|---:|---:|---|',
    row('one route', r.oneRoute),
    row('two healthy routes', r.twoRoutes),
    row('two routes, one failing every other call', r.flaky),
    '',
    `Two routes / one route: ${r.twoRoutesRatio} (target ≥ 0.95); flaky model calls not answered 200: ${r.flakyNot200} (target 0).`,
    '',
  ].join('\n');
}
