import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { UsageHistory } from '../../domain/history/usage';
import type { LedgerPage } from '../../domain/history/ledger-entries';
import type { DeliveryRecord } from '../../domain/webhooks/delivery-log';
import { DateTimeScalar } from '../scalars';
import { PageInfo } from './video-job';

/** GraphQL names are upper case; the values are REST's `group_by` values, so input passes straight through. */
export enum UsageGroupBy {
  DAY = 'day',
  KEY = 'key',
  MODEL = 'model',
}
registerEnumType(UsageGroupBy, { name: 'UsageGroupBy' });

export enum LedgerEntryKind {
  GRANT = 'grant',
  CHARGE = 'charge',
  REFUND = 'refund',
  HOLD = 'hold',
  RELEASE = 'release',
  /** Credits leased to an instance for a key's calls (their charges are the lease's). */
  LEASE = 'lease',
  /** What a closed lease's calls did not use, back to the balance. */
  LEASE_RETURN = 'lease_return',
}
registerEnumType(LedgerEntryKind, { name: 'LedgerEntryKind' });

@ObjectType('UsageBucket', { description: 'Credits spent on one UTC day, net of refunds.' })
export class UsageBucket {
  @Field(() => String, { description: 'YYYY-MM-DD (UTC).' }) day!: string;
  @Field(() => ID, { nullable: true, description: 'Grouped by KEY: the key that spent.' }) keyId!: string | null;
  @Field(() => String, { nullable: true, description: 'Grouped by MODEL: the model paid for (null for charges before models were recorded).' })
  model!: string | null;
  @Field(() => Float) credits!: number;
}

@ObjectType('Usage', { description: 'Spending from the ledger between two UTC days (both included); test keys spend nothing.' })
export class UsageType {
  @Field(() => String) from!: string;
  @Field(() => String) to!: string;
  @Field(() => UsageGroupBy) groupBy!: UsageGroupBy;
  @Field(() => [UsageBucket], { description: 'Days with spending only, oldest first.' }) buckets!: UsageBucket[];
}

export const toUsageType = (u: UsageHistory): UsageType => ({
  from: u.from,
  to: u.to,
  groupBy: u.groupBy as UsageGroupBy,
  buckets: u.buckets.map((b) => ({ day: b.day, keyId: b.keyId, model: b.model, credits: b.credits })),
});

@ObjectType('LedgerEntry', { description: 'One change of the balance; the balance is the sum of all entries.' })
export class LedgerEntryType {
  @Field(() => ID) id!: string;
  @Field(() => LedgerEntryKind) kind!: LedgerEntryKind;
  @Field(() => Float, { description: 'Signed: negative takes credits away.' }) credits!: number;
  @Field(() => String, { nullable: true, description: 'What it paid for: a job id or a hold id.' }) reference!: string | null;
  @Field(() => ID, { nullable: true }) keyId!: string | null;
  @Field(() => String, { nullable: true }) model!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => DateTimeScalar) created!: Date;
}

@ObjectType('LedgerEntryConnection', { description: 'Newest first; pass pageInfo.endCursor as `after` for the next page.' })
export class LedgerEntryConnection {
  @Field(() => [LedgerEntryType]) nodes!: LedgerEntryType[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

export const toLedgerConnection = (p: LedgerPage): LedgerEntryConnection => ({
  nodes: p.entries.map((e) => ({ ...e, kind: e.kind as LedgerEntryKind })),
  pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
});

@ObjectType('WebhookDelivery', { description: 'One delivery attempt (CONTRACT.md).' })
export class WebhookDeliveryType {
  @Field(() => String) eventId!: string;
  @Field(() => String, { description: 'The event type: video.completed, video.failed, balance.low, key.budget_threshold, key.expiring or purchase.completed.' })
  eventType!: string;
  @Field(() => String) deliveryId!: string;
  @Field(() => Int) attempt!: number;
  @Field(() => Int, { nullable: true, description: 'The receiver status; null when it did not answer.' }) statusCode!: number | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) durationMs!: number;
  @Field(() => DateTimeScalar) created!: Date;
}

export const toDeliveryType = (d: DeliveryRecord): WebhookDeliveryType => ({
  eventId: d.eventId,
  eventType: d.eventType,
  deliveryId: d.deliveryId,
  attempt: d.attempt,
  statusCode: d.statusCode,
  error: d.error,
  durationMs: d.durationMs,
  created: new Date(d.created * 1000),
});
