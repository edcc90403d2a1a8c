import { useEffect, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { ModelsQuery } from '../api/operations';
import type { ModelsQuery as ModelsResult } from '../gql/graphql';
import { ErrorNote } from '../ui';

export type ModelRecord = ModelsResult['models'][number];

function price(m: ModelRecord): string {
  const p = m.pricing;
  if (p.creditsPer10kTokens !== null && p.creditsPer10kTokens !== undefined) return `${p.creditsPer10kTokens} credits / 10k tokens`;
  if (p.creditsPerImage !== null && p.creditsPerImage !== undefined) return `${p.creditsPerImage} credits / image`;
  if (p.creditsPerSecond !== null && p.creditsPerSecond !== undefined) return `${p.creditsPerSecond} credits / second`;
  if (p.video?.length) return p.video.map((v) => `${v.duration} ${v.resolution}: ${v.credits}`).join(' · ');
  return '—';
}

/** The catalog, once per page load. */
let cached: Promise<ModelRecord[]> | null = null;
export function loadModels(token: Bearer): Promise<ModelRecord[]> {
  cached ??= execute(token, ModelsQuery).then((d) => d.models);
  cached.catch(() => (cached = null));
  return cached;
}

export function Models({ token }: { token: Bearer }) {
  const [models, setModels] = useState<ModelRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadModels(token).then(setModels, (e) => setError(describeError(e)));
  }, [token]);
  return (
    <section aria-label="Model catalog">
      <ErrorNote message={error} />
      {!models && !error && <p>Loading models…</p>}
      <ul class="cards">
        {models?.map((m) => (
          <li class="card" key={m.id}>
            <h2 class="mono">{m.id}</h2>
            <p class="tags">
              {m.capabilities.map((c) => (
                <span class="tag">{c}</span>
              ))}
              {m.provider && <span class="tag muted">{m.provider}</span>}
            </p>
            {m.description && <p>{m.description}</p>}
            <p>
              <strong>Price:</strong> {price(m)}
            </p>
          </li>
        ))}
      </ul>
    </section>
  );
}
