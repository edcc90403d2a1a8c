/**
 * Which budget refuses `p_amount`, given the room each leaves in the periods that hold `p_day`
 * (null: the key has no such budget): 0 none, 2 the day's (its daily cap), 3 the week's, 4 the
 * month's; of several, the one whose period ends last, when room can come back.
 */
export const SVC_BUDGET_SHORT = {
  name: 'svc_budget_short',
  sql: `create or replace function svc_budget_short(p_day date, p_amount bigint, p_day_room bigint, p_week_room bigint, p_month_room bigint)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $function$
  select coalesce((
    select b.code
      from (values (2, p_day_room, p_day + 1),
                   (3, p_week_room, date_trunc('week', p_day::timestamp)::date + 7),
                   (4, p_month_room, (date_trunc('month', p_day::timestamp) + interval '1 month')::date)) as b(code, room, ends)
     where b.room < p_amount
     order by b.ends desc, b.code desc
     limit 1), 0)
$function$`,
};
