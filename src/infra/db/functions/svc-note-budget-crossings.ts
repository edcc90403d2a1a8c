/**
 * The one place a key's spend crossing 80% or 100% of a budget is found (budget-crossings.ts):
 * compares the key's committed spend in the periods that hold `p_day` with its budgets, and writes
 * each threshold reached and not yet written (once per key, period, period start, budget and
 * percent), with its account's `key.budget_threshold` event (svc_account_event: once per key,
 * period, period start and percent). Answers those it wrote, as a JSON array, or null. Writes
 * only new rows and takes no lock but theirs: callers run it last, after the low-balance alert.
 */
export const SVC_NOTE_BUDGET_CROSSINGS = {
  name: 'svc_note_budget_crossings',
  sql: `create or replace function svc_note_budget_crossings(p_key text, p_day date)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
      declare
        b record;
        c record;
        t record;
        v_out jsonb;
      begin
        select account_id, daily_spend_cap_micro as day_budget, week_budget_micro as week_budget, month_budget_micro as month_budget into b
          from api_keys where id = p_key;
        if not found or (b.day_budget is null and b.week_budget is null and b.month_budget is null) then return null; end if;
        select * into c from svc_committed_spend(p_key, p_day);
        for t in
          select v.period, v.starts, v.ends, v.budget, v.spent, pct.percent
            from (values ('day', p_day, p_day + 1, b.day_budget, c.day_micro),
                         ('week', date_trunc('week', p_day::timestamp)::date, date_trunc('week', p_day::timestamp)::date + 7, b.week_budget, c.week_micro),
                         ('month', date_trunc('month', p_day::timestamp)::date, (date_trunc('month', p_day::timestamp) + interval '1 month')::date,
                          b.month_budget, c.month_micro)) as v(period, starts, ends, budget, spent)
            cross join (values (80), (100)) as pct(percent)
           where v.budget is not null and v.spent * 100 >= v.budget * pct.percent
           order by v.period, pct.percent
        loop
          insert into key_budget_notices (api_key_id, period, starts, budget_micro, percent, spent_micro)
            values (p_key, t.period, t.starts, t.budget, t.percent, t.spent) on conflict do nothing;
          if found then
            -- resetsAt as GET /v1/key writes it (RFC 3339, UTC, milliseconds).
            perform svc_account_event(b.account_id, 'key.budget_threshold',
              p_key || '/' || t.period || '/' || to_char(t.starts, 'YYYY-MM-DD') || '/' || t.percent,
              jsonb_build_object('keyId', p_key, 'period', t.period, 'percent', t.percent,
                'credits', trim_scale(t.budget / 1000000.0), 'spent', trim_scale(t.spent / 1000000.0),
                'resetsAt', to_char(t.ends, 'YYYY-MM-DD') || 'T00:00:00.000Z'));
            v_out := coalesce(v_out, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
              'key', p_key, 'period', t.period, 'starts', to_char(t.starts, 'YYYY-MM-DD'), 'percent', t.percent, 'budget', t.budget, 'spent', t.spent));
          end if;
        end loop;
        return v_out;
      end $function$`,
};
