/**
 * Writes request-log rows given as a JSON array of rows in the domain's shape (RequestLogRow:
 * camelCase keys, `createdMs` in epoch milliseconds), idempotently by (account, created, id): a row
 * written twice (a charge replayed from the journal after its commit landed) is written once.
 * Called by the charge paths (svc_record_charges, the lone charge statement), a video job's
 * insert, and the writer of rows that carry no charge. Answers how many rows were new.
 *
 * PL/pgSQL rather than SQL: a SQL function's body is planned again on every call, and planning
 * an insert into the partitioned table cost more than the insert itself (once per group commit);
 * PL/pgSQL keeps the plan for the session.
 */
export const SVC_LOG_REQUESTS = {
  name: 'svc_log_requests',
  sql: `create or replace function svc_log_requests(p_rows jsonb)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
declare
  v_written integer;
begin
  with written as (
    insert into request_log (id, created, account_id, api_key_id, model, endpoint, status, credits_micro, prompt_tokens,
                             completion_tokens, images, seconds, latency_ms, idempotency_key, error_type, error_code, job_id)
    select x.id, timestamptz 'epoch' + x."createdMs" * interval '1 millisecond', x."accountId", x."keyId", x.model, x.endpoint, x.status,
           coalesce(x."creditsMicro", 0), coalesce(x."promptTokens", 0), coalesce(x."completionTokens", 0), coalesce(x.images, 0),
           coalesce(x.seconds, 0), coalesce(x."latencyMs", 0), x."idempotencyKey", x."errorType", x."errorCode", x."jobId"
      from jsonb_to_recordset(p_rows) as x(id text, "createdMs" bigint, "accountId" text, "keyId" text, model text, endpoint text,
                                           status integer, "creditsMicro" bigint, "promptTokens" integer, "completionTokens" integer,
                                           images integer, seconds integer, "latencyMs" integer, "idempotencyKey" text,
                                           "errorType" text, "errorCode" text, "jobId" text)
    on conflict do nothing
    returning 1
  )
  select count(*)::integer into v_written from written;
  return v_written;
end
$function$`,
};
