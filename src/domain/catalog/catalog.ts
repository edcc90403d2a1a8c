import { readFileSync } from 'node:fs';
import { modelNotFound } from '../errors/domain-error';
import type { FieldPath } from '../errors/field-path';
import { BUILTIN_CATALOG } from './builtin-catalog';
import { catalogSchema, type CatalogData, type CatalogInput, type CatalogModel, type ModelGroup } from './model';

/** Models are listed with a fixed `created` so the list is stable across restarts. */
const CATALOG_CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

export interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  capabilities: string[];
  /** Chat: what a prompt may contain (text, image, audio, file). */
  input_modalities?: string[];
  /** Images: the optional request parameters the model takes (quality, background, output_format, …). */
  parameters?: string[];
  provider?: string;
  description?: string;
  pricing: Record<string, number | Record<string, Record<string, number>>>;
}

const CAPABILITIES: Record<ModelGroup, string[]> = {
  chat: ['chat', 'completion', 'streaming'],
  image: ['image-generation'],
  'image-edit': ['image-edit'],
  video: ['video'],
  'motion-control': ['motion-control'],
};

const INPUT_CAPABILITIES: Record<string, string> = { image: 'vision', audio: 'audio-input', file: 'file-input' };

function capabilitiesOf(m: CatalogModel): string[] {
  if (m.group !== 'chat') return CAPABILITIES[m.group];
  const caps = [...CAPABILITIES.chat];
  if (m.tools) caps.push('tools');
  if (m.structuredOutputs) caps.push('structured-outputs');
  for (const input of m.inputs) if (INPUT_CAPABILITIES[input]) caps.push(INPUT_CAPABILITIES[input]);
  return caps;
}

function toRecord(m: CatalogModel): ModelRecord {
  const record: ModelRecord = {
    id: m.id,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: m.ownedBy,
    capabilities: capabilitiesOf(m),
    pricing: {},
  };
  if (m.group === 'chat') record.input_modalities = m.inputs;
  if (m.description) record.description = m.description;
  switch (m.group) {
    case 'chat':
      record.pricing = { credits_per_10k_tokens: m.creditsPer10kTokens };
      break;
    case 'image':
      record.provider = m.providerLabel;
      record.pricing = { credits_per_image: m.creditsPerImage };
      record.parameters = m.options;
      break;
    case 'image-edit':
      record.pricing = { credits_per_image: m.creditsPerImage };
      record.parameters = m.options;
      break;
    case 'video':
      record.pricing = { credits: m.credits };
      break;
    case 'motion-control':
      record.pricing = { credits_per_second: m.creditsPerSecond };
      break;
  }
  return record;
}

/** A catalog that failed to load: what is wrong, each problem with the path of its field. */
export class CatalogError extends Error {
  constructor(
    message: string,
    readonly problems: Array<{ path: string; message: string }>,
  ) {
    super(message);
    this.name = 'CatalogError';
  }
}

/**
 * The model catalog: lookup by id and group, and the public records. One object for the life of
 * the process; `replace` swaps what it holds (a reload), and a call that looked its model up
 * before keeps that model, its routes included, to the end.
 */
export class Catalog {
  private byId!: Map<string, CatalogModel>;
  records!: ModelRecord[];
  data!: CatalogData;

  constructor(data: CatalogData) {
    this.replace(data);
  }

  static load(modelsFile?: string): Catalog {
    return new Catalog(Catalog.read(modelsFile));
  }

  /** MODELS_FILE (or the built-in catalog) read and validated; a CatalogError names each bad field. */
  static read(modelsFile?: string): CatalogData {
    let input: CatalogInput = BUILTIN_CATALOG;
    if (modelsFile) {
      try {
        input = JSON.parse(readFileSync(modelsFile, 'utf8')) as CatalogInput;
      } catch (err) {
        throw new CatalogError(`MODELS_FILE: cannot read ${modelsFile} as JSON (${(err as Error).message})`, [{ path: '(root)', message: 'not JSON' }]);
      }
    }
    const parsed = catalogSchema.safeParse(input);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
      throw new CatalogError(`MODELS_FILE: invalid catalog:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`, problems);
    }
    return parsed.data;
  }

  replace(data: CatalogData): void {
    this.data = data;
    this.byId = new Map(data.models.map((m) => [m.id, m]));
    this.records = data.models.map(toRecord);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  find(id: string): CatalogModel | undefined {
    return this.byId.get(id);
  }

  /** The model `id` of `group`; a model of another group is as unknown to this endpoint as a missing one. */
  require<G extends ModelGroup>(id: string, group: G, path: FieldPath = ['model']): Extract<CatalogModel, { group: G }> {
    const model = this.byId.get(id);
    if (!model) throw modelNotFound(id, path);
    if (model.group !== group) {
      // Still a 404 (the contract's answer for a model this endpoint does not know), but saying why.
      const why = `The model '${id}' exists, but not for this endpoint (it is a ${model.group} model): GET /v1/models lists each model's kind.`;
      throw modelNotFound(id, path, why);
    }
    return model as Extract<CatalogModel, { group: G }>;
  }

  ofGroup<G extends ModelGroup>(group: G): Extract<CatalogModel, { group: G }>[] {
    return this.data.models.filter((m) => m.group === group) as Extract<CatalogModel, { group: G }>[];
  }

  get usdPerCredit(): number {
    return this.data.usdPerCredit;
  }
}
