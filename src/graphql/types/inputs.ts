import { Field, Float, InputType, Int, registerEnumType } from 'type-graphql';
import { ApiKeyMode, BudgetPeriodValue } from './account';
import { DateTimeScalar } from '../scalars';

/**
 * Inputs carry the REST fields in camelCase. Each converter builds the REST (snake_case) body and
 * hands it to the same domain function REST calls, so validation, defaults and the `param` of an
 * error are the REST ones. Absent or null fields are left out, as if the REST client omitted them.
 */
function body(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== null));
}

export enum CharacterOrientation {
  IMAGE = 'image',
  VIDEO = 'video',
}
registerEnumType(CharacterOrientation, { name: 'CharacterOrientation' });

@InputType('VideoQuoteInput')
export class VideoQuoteInput {
  @Field(() => String) model!: string;
  @Field(() => String, { nullable: true, description: '5s or 10s' }) duration?: string | null;
  @Field(() => String, { nullable: true, description: '480p, 720p or 1080p' }) resolution?: string | null;
  @Field(() => Int, { nullable: true, description: 'Motion control: 1 to 30' }) durationSeconds?: number | null;
}

export const quoteBody = (i: VideoQuoteInput) => body({ model: i.model, duration: i.duration, resolution: i.resolution, duration_seconds: i.durationSeconds });

@InputType('QueueVideoInput')
export class QueueVideoInput {
  @Field(() => String) model!: string;
  @Field(() => String, { nullable: true }) prompt?: string | null;
  @Field(() => String, { nullable: true }) duration?: string | null;
  @Field(() => String, { nullable: true }) resolution?: string | null;
  @Field(() => String, { nullable: true }) aspectRatio?: string | null;
  @Field(() => Boolean, { nullable: true }) audio?: boolean | null;
  @Field(() => String, { nullable: true }) imageUrl?: string | null;
  @Field(() => [String], { nullable: true }) referenceImageUrls?: string[] | null;
}

export const queueBody = (i: QueueVideoInput) =>
  body({
    model: i.model,
    prompt: i.prompt,
    duration: i.duration,
    resolution: i.resolution,
    aspect_ratio: i.aspectRatio,
    audio: i.audio,
    image_url: i.imageUrl,
    reference_image_urls: i.referenceImageUrls,
  });

@InputType('MotionControlInput')
export class MotionControlInput {
  @Field(() => String) imageUrl!: string;
  @Field(() => String) videoUrl!: string;
  @Field(() => Int) durationSeconds!: number;
  @Field(() => String, { nullable: true }) prompt?: string | null;
  @Field(() => Boolean, { nullable: true }) keepOriginalSound?: boolean | null;
  @Field(() => CharacterOrientation, { nullable: true }) characterOrientation?: CharacterOrientation | null;
}

export const motionBody = (i: MotionControlInput) =>
  body({
    image_url: i.imageUrl,
    video_url: i.videoUrl,
    duration_seconds: i.durationSeconds,
    prompt: i.prompt,
    keep_original_sound: i.keepOriginalSound,
    character_orientation: i.characterOrientation,
  });

@InputType('BudgetInput', { description: 'At most one per period.' })
export class BudgetInput {
  @Field(() => BudgetPeriodValue) period!: BudgetPeriodValue;
  @Field(() => Float, { description: 'Credits the key may spend in the period; more than 0, at most 1,000,000,000.' }) credits!: number;
}

/** As REST takes them. */
const budgetsBody = (budgets: BudgetInput[] | null | undefined) => budgets?.map((b) => ({ period: b.period, credits: b.credits })) ?? budgets;

@InputType('CreateApiKeyInput')
export class CreateApiKeyInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => ApiKeyMode, { nullable: true }) mode?: ApiKeyMode | null;
  @Field(() => [String], { nullable: true }) allowedModels?: string[] | null;
  @Field(() => [String], { nullable: true }) blockedModels?: string[] | null;
  @Field(() => Float, { nullable: true, description: "Credits per UTC day; live keys only: the 'day' budget." }) dailySpendCap?: number | null;
  @Field(() => [BudgetInput], { nullable: true, description: 'Budgets per UTC day, week and month; live keys only.' }) budgets?: BudgetInput[] | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'When the key stops working; in the future. Omitted or null: never.' }) expiresAt?: Date | null;
}

/** The domain reads a moment as REST carries it: RFC 3339 text. */
const rfc3339 = (at: Date | null | undefined) => (at ? at.toISOString() : at);

/** POST /account/api-keys takes camelCase already; nulls are dropped like the other inputs. */
export const createKeyBody = (i: CreateApiKeyInput) =>
  body({
    name: i.name,
    mode: i.mode,
    allowedModels: i.allowedModels,
    blockedModels: i.blockedModels,
    dailySpendCap: i.dailySpendCap,
    budgets: budgetsBody(i.budgets),
    expiresAt: rfc3339(i.expiresAt),
  });

/**
 * PATCH /account/api-keys/<id>: here null means "clear the list" and an absent argument means
 * "leave it", so nulls are kept and only undefined is dropped.
 */
export function permissionsBody(allowedModels: string[] | null | undefined, blockedModels: string[] | null | undefined) {
  const out: Record<string, unknown> = {};
  if (allowedModels !== undefined) out.allowedModels = allowedModels;
  if (blockedModels !== undefined) out.blockedModels = blockedModels;
  return out;
}

@InputType('UpdateApiKeyInput', {
  description: 'PATCH /account/api-keys/<id>: an omitted field is left as it is; null clears a list, the cap, the budgets or the expiry.',
})
export class UpdateApiKeyInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => [String], { nullable: true }) allowedModels?: string[] | null;
  @Field(() => [String], { nullable: true }) blockedModels?: string[] | null;
  @Field(() => Float, { nullable: true, description: "Credits per UTC day; live keys only: the 'day' budget." }) dailySpendCap?: number | null;
  @Field(() => [BudgetInput], { nullable: true, description: "Replaces the key's budgets (the 'day' one is dailySpendCap); null or [] clears them." })
  budgets?: BudgetInput[] | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'When the key stops working; in the future. null: never.' }) expiresAt?: Date | null;
}

/** Nulls are kept (they clear), undefined is dropped (left as it is); a null name is just left out. */
export function updateKeyBody(i: UpdateApiKeyInput): Record<string, unknown> {
  const out: Record<string, unknown> = { ...permissionsBody(i.allowedModels, i.blockedModels) };
  if (i.name !== undefined && i.name !== null) out.name = i.name;
  if (i.dailySpendCap !== undefined) out.dailySpendCap = i.dailySpendCap;
  if (i.budgets !== undefined) out.budgets = budgetsBody(i.budgets);
  if (i.expiresAt !== undefined) out.expiresAt = rfc3339(i.expiresAt);
  return out;
}
