/**
 * A MODELS_FILE for a test gateway: the built-in catalog with some models routed elsewhere (to
 * a fake upstream on a real socket) and, optionally, models added.
 *
 *   const models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl } });
 *   startTestGateway({ MODELS_FILE: models.path });  …  models.remove();
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';

type Route = CatalogInput['models'][number]['route'];

export function writeModelsFile(routes: Record<string, Route>, extra: CatalogInput['models'] = []): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-models-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    // One attempt per call, unless a test asks for more: these tests count what their upstream fakes were asked.
    models: [...BUILTIN_CATALOG.models.map((m) => (routes[m.id] ? { ...m, route: routes[m.id]!, retry: { attempts: 1, budgetSeconds: 30 } } : m)), ...extra],
  };
  const path = join(dir, 'models.json');
  writeFileSync(path, JSON.stringify(catalog));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
