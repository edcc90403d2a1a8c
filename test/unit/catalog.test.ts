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

  test('a fal-queue route without a baseUrl is refused too; with one it loads', () => {
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
