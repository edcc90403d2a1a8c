import { Field, Float, ObjectType } from 'type-graphql';
import type { VideoQuote } from '../../domain/video/video-service';

@ObjectType('EstimatedCostUsd')
export class EstimatedCostUsd {
  @Field(() => Float) member!: number;
  @Field(() => Float) nonMember!: number;
}

@ObjectType('VideoQuote')
export class VideoQuoteType {
  @Field(() => String) model!: string;
  @Field(() => String) duration!: string;
  @Field(() => String) resolution!: string;
  @Field(() => Float) credits!: number;
  @Field(() => EstimatedCostUsd) estimatedCostUsd!: EstimatedCostUsd;
}

export const toVideoQuoteType = (q: VideoQuote): VideoQuoteType => ({
  model: q.model,
  duration: q.duration,
  resolution: q.resolution,
  credits: q.credits,
  estimatedCostUsd: { member: q.estimatedCostUsd.member, nonMember: q.estimatedCostUsd.nonMember },
});
