import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import type { RequestLogPage } from '../../domain/requests/request-log';
import { requestView, type RequestLogRow } from '../../domain/requests/call-log';
import { DateTimeScalar } from '../scalars';
import { PageInfo } from './video-job';

@ObjectType('RequestUsage', { description: 'What the call used: tokens charged, images delivered, seconds of video.' })
export class RequestUsageType {
  @Field(() => Int) promptTokens!: number;
  @Field(() => Int) completionTokens!: number;
  @Field(() => Int) images!: number;
  @Field(() => Int) seconds!: number;
}

@ObjectType('RequestError', { description: "The error the call ended with, as REST's error body names it." })
export class RequestErrorType {
  @Field(() => String, { description: '`client_closed` when the client left before its answer ended.' }) type!: string;
  @Field(() => String, { nullable: true }) code!: string | null;
}

@ObjectType('RequestLogEntry', { description: 'One authenticated /v1 call that named a model.' })
export class RequestLogEntryType {
  @Field(() => ID, { description: 'The x-request-id the call was answered with.' }) id!: string;
  @Field(() => DateTimeScalar) created!: Date;
  @Field(() => ID) keyId!: string;
  @Field(() => String) model!: string;
  @Field(() => String, { description: 'The path called, e.g. /v1/chat/completions.' }) endpoint!: string;
  @Field(() => Int, { description: 'The HTTP status sent; 499 when the client left before any answer.' }) status!: number;
  @Field(() => Float, { description: "What the call moved on the balance (a test key's: what it would have cost)." }) credits!: number;
  @Field(() => RequestUsageType) usage!: RequestUsageType;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) idempotencyKey!: string | null;
  @Field(() => RequestErrorType, { nullable: true }) error!: RequestErrorType | null;
  @Field(() => ID, { nullable: true, description: 'The video job a queueing call made.' }) jobId!: string | null;
}

@ObjectType('RequestLogConnection', { description: 'Newest first; pass pageInfo.endCursor as `after` for the next page.' })
export class RequestLogConnection {
  @Field(() => [RequestLogEntryType]) nodes!: RequestLogEntryType[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

const toEntry = (r: RequestLogRow): RequestLogEntryType => ({
  ...requestView(r),
  created: new Date(r.createdMs),
  model: r.model ?? '',
});

export const toRequestLogConnection = (p: RequestLogPage): RequestLogConnection => ({
  nodes: p.rows.map(toEntry),
  pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
});
