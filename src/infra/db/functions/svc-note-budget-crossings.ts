/**
 * The one place a key's spend crossing 80% or 100% of a budget is found (budget-crossings.ts):
 * compares the key's committed spend in the periods that hold `p_day` with its budgets, and writes
 * each threshold reached and not yet written (once per key, period, period start, budget and
 * percent). Answers those it wrote, as a JSON array, or null. Takes no lock but the new rows':
 * callers run it after their other writes.
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
        select daily_spend_cap_micro as day_budget, week_budget_micro as week_budget, month_budget_micro as month_budget into b
          from api_keys where id = p_key;
        if not found or (b.day_budget is null and b.week_budget is null and b.month_budget is null) then return null; end if;
        select * into c from svc_committed_spend(p_key, p_day);
        for t in
          select v.period, v.starts, v.budget, v.spent, pct.percent
            from (values ('day', p_day, b.day_budget, c.day_micro),
                         ('week', date_trunc('week', p_day::timestamp)::date, b.week_budget, c.week_micro),
                         ('month', date_trunc('month', p_day::timestamp)::date, b.month_budget, c.month_micro)) as v(period, starts, budget, spent)
            cross join (values (80), (100)) as pct(percent)
           where v.budget is not null and v.spent * 100 >= v.budget * pct.percent
           order by v.period, pct.percent
        loop
          insert into key_budget_notices (api_key_id, period, starts, budget_micro, percent, spent_micro)
            values (p_key, t.period, t.starts, t.budget, t.percent, t.spent) on conflict do nothing;
          if found then
            v_out := coalesce(v_out, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
              'key', p_key, 'period', t.period, 'starts', to_char(t.starts, 'YYYY-MM-DD'), 'percent', t.percent, 'budget', t.budget, 'spent', t.spent));
          end if;
        end loop;
        return v_out;
      end $function$`,
};
