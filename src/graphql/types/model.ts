import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { Catalog, ModelRecord } from '../../domain/catalog/catalog';
import type { CatalogModel } from '../../domain/catalog/model';
import { VIDEO_DURATIONS, VIDEO_RESOLUTIONS } from '../../domain/catalog/model';
import { DateTimeScalar } from '../scalars';

@ObjectType('VideoPrice')
export class VideoPrice {
  @Field(() => String) duration!: string;
  @Field(() => String) resolution!: string;
  @Field(() => Int) credits!: number;
}

@ObjectType('ModelPricing', { description: 'The field that applies to the model group is set; the others are null.' })
export class ModelPricing {
  @Field(() => Int, { nullable: true }) creditsPer10kTokens!: number | null;
  @Field(() => Int, { nullable: true }) creditsPerImage!: number | null;
  @Field(() => Int, { nullable: true }) creditsPerSecond!: number | null;
  @Field(() => [VideoPrice], { nullable: true }) video!: VideoPrice[] | null;
}

@ObjectType('Model', { description: 'A model record, as GET /v1/models.' })
export class ModelType {
  @Field(() => ID) id!: string;
  @Field(() => String) ownedBy!: string;
  @Field(() => [String]) capabilities!: string[];
  @Field(() => String, { nullable: true, description: 'Image models: a label for UI grouping.' }) provider!: string | null;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => DateTimeScalar) created!: Date;
  @Field(() => ModelPricing) pricing!: ModelPricing;
}

function pricingOf(m: CatalogModel): ModelPricing {
  const p: ModelPricing = { creditsPer10kTokens: null, creditsPerImage: null, creditsPerSecond: null, video: null };
  if (m.group === 'chat') p.creditsPer10kTokens = m.creditsPer10kTokens;
  else if (m.group === 'image' || m.group === 'image-edit') p.creditsPerImage = m.creditsPerImage;
  else if (m.group === 'motion-control') p.creditsPerSecond = m.creditsPerSecond;
  else p.video = VIDEO_DURATIONS.flatMap((d) => VIDEO_RESOLUTIONS.map((r) => ({ duration: d, resolution: r, credits: m.credits[d][r] })));
  return p;
}

/** The public record (REST's) for the shared fields, the catalog entry for typed pricing; never the route. */
export function toModelType(catalog: Catalog, r: ModelRecord): ModelType {
  return {
    id: r.id,
    ownedBy: r.owned_by,
    capabilities: [...r.capabilities],
    provider: r.provider ?? null,
    description: r.description ?? null,
    created: new Date(r.created * 1000),
    pricing: pricingOf(catalog.find(r.id)!),
  };
}
