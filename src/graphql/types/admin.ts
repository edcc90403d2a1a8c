import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import type { AccountSummary } from '../../domain/operators/operator-repository';
import type { AccountPage, DailyTotal } from '../../domain/operators/operator-reads';
import type { AuditEntry, AuditPage } from '../../domain/operators/audit-log';
import type { Account } from '../../domain/accounts/account-service';
import type { UpstreamView } from '../../domain/routing/upstreams-view';
import { microToCredits } from '../../domain/shared/money';
import { DateTimeScalar, JSONObjectScalar } from '../scalars';
import { PageInfo } from './video-job';

@ObjectType('AdminAccount', { description: 'Any account, as an operator sees it: who owns it, its balance and member flag.' })
export class AdminAccountType {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: "The ID tokens' issuer." }) issuer!: string;
  @Field(() => String, { description: "The ID tokens' `sub`." }) subject!: string;
  @Field(() => Float, { description: 'Credits; fractions allowed.' }) balance!: number;
  @Field(() => Boolean) member!: boolean;
  @Field(() => DateTimeScalar) created!: Date;
}

export const toAdminAccountType = (a: AccountSummary | Account): AdminAccountType => ({
  id: a.id,
  issuer: a.issuer,
  subject: a.subject,
  balance: microToCredits(a.balanceMicro),
  member: a.member,
  created: a.created,
});

@ObjectType('AdminAccountConnection', { description: 'Newest first; pass pageInfo.endCursor as `after` for the next page.' })
export class AdminAccountConnection {
  @Field(() => [AdminAccountType]) nodes!: AdminAccountType[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

export const toAdminAccountConnection = (p: AccountPage): AdminAccountConnection => ({
  nodes: p.accounts.map(toAdminAccountType),
  pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
});

@ObjectType('UpstreamWindow', { description: "The circuit's last 30 s." })
export class UpstreamWindowType {
  @Field(() => Int) calls!: number;
  @Field(() => Int) failures!: number;
}

@ObjectType('UpstreamRoute', { description: 'An upstream route and its circuit, as GET /admin/upstreams.' })
export class UpstreamRouteType {
  @Field(() => ID) id!: string;
  @Field(() => String) provider!: string;
  @Field(() => [String]) models!: string[];
  @Field(() => String, { description: 'closed, open or half_open.' }) state!: string;
  @Field(() => UpstreamWindowType) window!: UpstreamWindowType;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field(() => DateTimeScalar, { nullable: true }) openedAt!: Date | null;
}

export const toUpstreamRouteType = (u: UpstreamView): UpstreamRouteType => ({ ...u, openedAt: u.openedAt === null ? null : new Date(u.openedAt) });

@ObjectType('DailyTotal', { description: 'One UTC day of the business.' })
export class DailyTotalType {
  @Field(() => String, { description: 'YYYY-MM-DD (UTC).' }) day!: string;
  @Field(() => Float, { description: 'Credits sold: the grants of purchases.' }) sold!: number;
  @Field(() => Float, { description: 'Credits spent: charges net of their refunds, every account.' }) spent!: number;
}

export const toDailyTotalType = (d: DailyTotal): DailyTotalType => ({ ...d });

@ObjectType('AuditEntry', { description: 'One operator action: who, what, on what, and its target before and after.' })
export class AuditEntryType {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: '`token` (ADMIN_TOKEN) or `sub:<subject>`.' }) actor!: string;
  @Field(() => String, { description: 'credits.grant, credits.take_back, account.member or catalog.reload.' }) action!: string;
  @Field(() => String, { description: 'An account id, or `catalog`.' }) target!: string;
  @Field(() => JSONObjectScalar, { nullable: true }) before!: Record<string, unknown> | null;
  @Field(() => JSONObjectScalar, { nullable: true }) after!: Record<string, unknown> | null;
  @Field(() => DateTimeScalar) created!: Date;
}

export const toAuditEntryType = (e: AuditEntry): AuditEntryType => ({ ...e, before: e.before, after: e.after });

@ObjectType('AuditEntryConnection', { description: 'Newest first; pass pageInfo.endCursor as `after` for the next page.' })
export class AuditEntryConnection {
  @Field(() => [AuditEntryType]) nodes!: AuditEntryType[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

export const toAuditConnection = (p: AuditPage): AuditEntryConnection => ({
  nodes: p.entries.map(toAuditEntryType),
  pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
});
