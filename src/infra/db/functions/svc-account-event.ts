/**
 * The account events' outbox: records one event of an account (`balance.low`, …) and, when the
 * account has a webhook, its first delivery attempt (a `webhook_delivery` work row, due now,
 * signed with the secret the webhook has at this moment), in the caller's transaction. The
 * event's id is derived from the account, the type and `p_occurrence`, what makes the event once
 * (a crossing's number, a key's budget period and percent, a purchase's session): recording the
 * same occurrence again, from a retry or another instance, writes nothing and answers null.
 * The body is the envelope `{ id, type, created, data }`, written once: every attempt sends
 * these bytes.
 */
export const SVC_ACCOUNT_EVENT = {
  name: 'svc_account_event',
  sql: `create or replace function svc_account_event(p_account text, p_type text, p_occurrence text, p_data jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
  declare
    v_id text := 'evt_' || md5(p_account || '/' || p_type || '/' || p_occurrence);
    v_delivery text;
    v_url text;
    v_secret text;
  begin
    insert into account_events (id, account_id, type, occurrence, data) values (v_id, p_account, p_type, p_occurrence, p_data)
      on conflict (id) do nothing;
    if not found then return null; end if;
    select webhook_url, webhook_secret into v_url, v_secret from account_alerts where account_id = p_account;
    if v_url is not null and v_secret is not null then
      v_delivery := 'dlv_' || replace(gen_random_uuid()::text, '-', '');
      insert into work_items (kind, ref, payload, due_at) values ('webhook_delivery', v_delivery, jsonb_build_object(
        'eventId', v_id, 'deliveryId', v_delivery, 'event', p_type, 'accountId', p_account, 'keyId', null, 'jobId', null,
        'url', v_url, 'secret', v_secret, 'attempt', 1,
        'body', jsonb_build_object('id', v_id, 'type', p_type, 'created', extract(epoch from now())::bigint, 'data', p_data)::text), now());
    end if;
    return v_id;
  end $function$`,
};
