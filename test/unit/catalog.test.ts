import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../../src/domain/catalog/catalog';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'catalog-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `catalog` as a MODELS_FILE and loads it; answers the load error's message, or '' when it loaded. */
function loadError(catalog: unknown, name = 'models.json'): string {
  const file = join(dir, name);
  writeFileSync(file, typeof catalog === 'string' ? catalog : JSON.stringify(catalog));
  try {
    Catalog.load(file);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

/** The built-in catalog with `change` applied to a deep copy of its models. */
function withModels(change: (models: any[]) => void): CatalogInput {
  const copy = structuredClone(BUILTIN_CATALOG) as CatalogInput;
  change(copy.models as any[]);
  return copy;
}

const indexOf = (id: string) => BUILTIN_CATALOG.models.findIndex((m) => m.id === id);

describe('the built-in catalog', () => {
  const catalog = Catalog.load();

  test('has the chat model, 25+ image models priced 1..9, the edit model, four video models and motion control', () => {
    expect(catalog.require('svc-chat-1', 'chat').creditsPer10kTokens).toBe(1);
    const images = catalog.ofGroup('image');
    expect(images.length).toBeGreaterThanOrEqual(25);
    const prices = images.map((m) => m.creditsPerImage);
    expect(Math.min(...prices)).toBe(1);
    expect(Math.max(...prices)).toBe(9);
    expect(prices.every((p) => Number.isInteger(p) && p >= 1 && p <= 9)).toBe(true);
    expect(catalog.ofGroup('image-edit').map((m) => m.id)).toEqual(['svc-image-edit-1']);
    expect(catalog.ofGroup('video')).toHaveLength(4);
    expect(catalog.ofGroup('motion-control').map((m) => m.id)).toEqual(['svc-v3-motion-control']);
  });

  test('has exactly five creative models, including svc-creative-v8 and svc-creative-v7', () => {
    const creative = catalog.ofGroup('image').filter((m) => m.creative);
    expect(creative).toHaveLength(5);
    expect(creative.map((m) => m.id)).toEqual(expect.arrayContaining(['svc-creative-v8', 'svc-creative-v7']));
  });

  test('every model is served by the simulator and has a public record', () => {
    expect(catalog.data.models.every((m) => m.route.provider === 'simulator')).toBe(true);
    expect(catalog.records.map((r) => r.id)).toEqual(catalog.data.models.map((m) => m.id));
    expect(new Set(catalog.records.map((r) => r.id)).size).toBe(catalog.records.length);
  });

  test('the built-in catalog written out as a MODELS_FILE loads back the same', () => {
    expect(loadError(BUILTIN_CATALOG)).toBe('');
    const file = join(dir, 'models.json');
    expect(Catalog.load(file).data).toEqual(catalog.data);
  });
});

describe('a bad MODELS_FILE stops start-up with a message naming the problem', () => {
  test('a duplicate model id', () => {
    const message = loadError(withModels((models) => models.push({ ...models[indexOf('flux-pro')] })));
    expect(message).toMatch(/^MODELS_FILE: invalid catalog/);
    expect(message).toContain(`\n  models.${BUILTIN_CATALOG.models.length}.id: duplicate model id flux-pro`);
  });

  test('an upstream route without a baseUrl', () => {
    const i = indexOf('svc-chat-1');
    const message = loadError(
      withModels((models) => {
        models[i].route = { provider: 'openai-compatible', upstreamModel: 'gpt-x', apiKeyEnv: 'UPSTREAM_KEY' };
      }),
    );
    expect(message).toContain(`\n  models.${i}.route.baseUrl: baseUrl is required when provider is 'openai-compatible'`);
  });

  test('a fal-queue route without a baseUrl is refused as well; with one it loads', () => {
    const i = indexOf('svc-2-7-image-to-video');
    const route = { provider: 'fal-queue', upstreamModel: 'fal-ai/video' };
    expect(loadError(withModels((models) => void (models[i].route = route)))).toContain(`\n  models.${i}.route.baseUrl: `);
    expect(loadError(withModels((models) => void (models[i].route = { ...route, baseUrl: 'https://queue.example.com' })))).toBe('');
  });

  test('an unknown group', () => {
    const i = indexOf('flux-dev');
    const message = loadError(withModels((models) => void (models[i].group = 'audio')));
    expect(message).toMatch(/^MODELS_FILE: invalid catalog/);
    expect(message).toContain(`\n  models.${i}.group: `);
    expect(message).toContain("'image'");
  });

  test('a top-level field is named by its own path', () => {
    expect(loadError({ ...BUILTIN_CATALOG, usdPerCredit: 0 })).toMatch(/\n {2}usdPerCredit: /);
  });

  test('a file that is not JSON', () => {
    expect(loadError('{ "models": [', 'broken.json')).toMatch(/^MODELS_FILE: cannot read .*broken\.json as JSON/);
  });

  test('a file that does not exist', () => {
    expect(() => Catalog.load(join(dir, 'missing.json'))).toThrow(/MODELS_FILE: cannot read .*missing\.json/);
  });
});

describe('upstream routes', () => {
  const chat = indexOf('svc-chat-1');
  const up = (baseUrl: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai-compatible', upstreamModel: 'm', baseUrl, ...extra });

  test('a single route and a list of routes load alike; ids default to one per distinct upstream; the first route is the lowest priority', () => {
    const file = join(dir, 'routes.json');
    writeFileSync(
      file,
      JSON.stringify(
        withModels((models) => {
          models[chat].route = undefined;
          models[chat].routes = [
            up('https://b.example/v1', { priority: 1 }),
            up('https://a.example/v1', { weight: 3 }),
            up('https://a.example/v1', { apiKeyEnv: 'SECOND_KEY' }),
          ];
          models[indexOf('svc-creative-v8')].route = up('https://a.example/v1');
        }),
      ),
    );
    const catalog = Catalog.load(file);
    const model = catalog.require('svc-chat-1', 'chat');
    expect(model.routes.map((r) => [r.id, r.priority, r.weight])).toEqual([
      ['openai-compatible-1', 0, 3],
      ['openai-compatible-2', 0, 1],
      ['openai-compatible-0', 1, 1],
    ]);
    expect(model.route.id).toBe('openai-compatible-1');
    expect(model.retry).toEqual({ attempts: 3, budgetSeconds: 30 });
    // The same upstream in another model is the same route (and circuit).
    expect(catalog.require('svc-creative-v8', 'image').routes.map((r) => r.id)).toEqual(['openai-compatible-1']);
    // A simulator model keeps its one route.
    expect(catalog.require('svc-creative-v7', 'image').routes.map((r) => r.provider)).toEqual(['simulator']);
  });

  test.each([
    [
      'both route and routes',
      (m: any[]) => (m[chat].routes = [up('https://a.example/v1')]),
      `models.${indexOf('svc-chat-1')}.routes: a model names exactly one of route or routes`,
    ],
    ['neither', (m: any[]) => (m[chat].route = undefined), `models.${indexOf('svc-chat-1')}.routes: a model names exactly one of route or routes`],
    ['no routes', (m: any[]) => ((m[chat].route = undefined), (m[chat].routes = [])), `models.${indexOf('svc-chat-1')}.routes`],
    [
      'nine routes',
      (m: any[]) => ((m[chat].route = undefined), (m[chat].routes = Array.from({ length: 9 }, (_, i) => up(`https://${i}.example/v1`)))),
      `models.${indexOf('svc-chat-1')}.routes`,
    ],
    [
      'a negative weight',
      (m: any[]) => ((m[chat].route = undefined), (m[chat].routes = [up('https://a.example/v1', { weight: -1 })])),
      `models.${indexOf('svc-chat-1')}.routes.0.weight`,
    ],
    [
      'a provider that cannot serve chat',
      (m: any[]) => (m[chat].route = { ...up('https://a.example'), provider: 'fal-queue' }),
      `models.${indexOf('svc-chat-1')}.route.provider: provider 'fal-queue' cannot serve chat models`,
    ],
    [
      'one route id for two upstreams',
      (m: any[]) => (
        (m[chat].route = up('https://a.example/v1', { id: 'main' })),
        (m[indexOf('svc-creative-v8')].route = up('https://b.example/v1', { id: 'main' }))
      ),
      `models.${indexOf('svc-creative-v8')}.route.id: route id main names another upstream`,
    ],
    [
      'a route id twice in a model',
      (m: any[]) => (
        (m[chat].route = undefined),
        (m[chat].routes = [up('https://a.example/v1', { id: 'x' }), up('https://a.example/v1', { id: 'x', apiKeyEnv: 'K' })])
      ),
      `models.${indexOf('svc-chat-1')}.routes.1.id: route id x appears twice`,
    ],
    ['a retry of 0 attempts', (m: any[]) => (m[chat].retry = { attempts: 0 }), `models.${indexOf('svc-chat-1')}.retry.attempts`],
  ])('refused at load with the path of the bad field: %s', (_name, change, expected) => {
    expect(loadError(withModels(change))).toContain(expected);
  });
});
