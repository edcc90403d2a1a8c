/**
 * Which budget refuses `p_amount`, given the room each leaves in the periods that hold `p_day`
 * (null: the key has no such budget): 0 none, 2 the day's (its daily cap), 3 the week's, 4 the
 * month's; of several, the one whose period ends last, when room can come back (of two ending
 * together, the longer period). PL/pgSQL, with no query in it: a SQL function's body is planned
 * again in every transaction that calls it, and every lease take calls it.
 */
export const SVC_BUDGET_SHORT = {
  name: 'svc_budget_short',
  sql: `create or replace function svc_budget_short(p_day date, p_amount bigint, p_day_room bigint, p_week_room bigint, p_month_room bigint)
 RETURNS integer
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
declare
  v_code integer := 0;
  v_ends date;
  v_week_ends date := date_trunc('week', p_day::timestamp)::date + 7;
  v_month_ends date := (date_trunc('month', p_day::timestamp) + interval '1 month')::date;
begin
  -- In code order, a later one ending no sooner wins (a null room is no budget).
  if p_day_room < p_amount then v_code := 2; v_ends := p_day + 1; end if;
  if p_week_room < p_amount and (v_code = 0 or v_week_ends >= v_ends) then v_code := 3; v_ends := v_week_ends; end if;
  if p_month_room < p_amount and (v_code = 0 or v_month_ends >= v_ends) then v_code := 4; end if;
  return v_code;
end
$function$`,
};
