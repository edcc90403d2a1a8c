/**
 * Writes request-log rows, given as a JSON array of logged calls: each the call's `request_id`,
 * `account_id`, `api_key_id` and `model`, its credits (`credits_micro`; a charge item's are what
 * its lease paid, `lease_micro`), and its `log`, the rest of the row in the domain's shape
 * (RequestLogRow's camelCase keys, `createdMs` in epoch milliseconds), without the fields that
 * are null or zero; a field it names (`id`, `accountId`, `keyId`, `model`) is the row's, over the
 * call's. The charge items svc_record_charges reads are such calls, so a charge's row needs no
 * JSON built for it: `p_only`, when given, names the calls of `p_calls` to write. Idempotent by
 * (account, created, id): a row written twice (a charge replayed from the journal after its commit
 * landed) is written once. Called by svc_record_charges, a video job's insert, and the writer of
 * rows that carry no charge; the lone charge statement (sql-lease-store.ts) writes its row the
 * same way from typed parameters. Answers how many rows were new.
 *
 * PL/pgSQL rather than SQL: a SQL function's body is planned again on every call, and planning
 * an insert into the partitioned table cost more than the insert itself (once per group commit);
 * PL/pgSQL keeps the plan for the session.
 */
export const SVC_LOG_REQUESTS = {
  name: 'svc_log_requests',
  sql: `create or replace function svc_log_requests(p_calls jsonb, p_only text[] default null)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
declare
  v_written integer;
begin
  with written as (
    insert into request_log (id, created, account_id, api_key_id, model, endpoint, status, credits_micro, prompt_tokens,
                             completion_tokens, images, seconds, latency_ms, idempotency_key, error_type, error_code, job_id)
    select coalesce(l.id, x.request_id), timestamptz 'epoch' + l."createdMs" * interval '1 millisecond',
           coalesce(l."accountId", x.account_id), coalesce(l."keyId", x.api_key_id),
           case when x.log ? 'model' then l.model else x.model end, l.endpoint, l.status,
           coalesce(x.credits_micro, x.lease_micro, 0), coalesce(l."promptTokens", 0), coalesce(l."completionTokens", 0),
           coalesce(l.images, 0), coalesce(l.seconds, 0), coalesce(l."latencyMs", 0), l."idempotencyKey", l."errorType",
           l."errorCode", l."jobId"
      from jsonb_to_recordset(p_calls) as x(request_id text, account_id text, api_key_id text, model text, credits_micro bigint,
                                            lease_micro bigint, log jsonb)
      cross join lateral jsonb_to_record(x.log) as l(id text, "accountId" text, "keyId" text, model text, "createdMs" bigint,
                                                     endpoint text, status integer, "promptTokens" integer, "completionTokens" integer,
                                                     images integer, seconds integer, "latencyMs" integer, "idempotencyKey" text,
                                                     "errorType" text, "errorCode" text, "jobId" text)
     where x.log is not null and (p_only is null or x.request_id = any(p_only))
    on conflict do nothing
    returning 1
  )
  select count(*)::integer into v_written from written;
  return v_written;
end
$function$`,
};
