/**
 * The request log's partitions, one per UTC day (`request_log_YYYYMMDD`): those of `p_today`
 * and the `p_days_ahead` days after it are created when missing, those of days before
 * `p_today - p_keep_days` dropped, with the default partition's rows of those days. With
 * `p_keep_days` 0 (the log is off) every day's partition goes and none is made.
 *
 * Safe when several instances run it at once: one at a time under an advisory lock, and each
 * step looks before it acts. A day's partition is made apart and attached (SHARE UPDATE
 * EXCLUSIVE on the parent: inserts go on), with the rows the default partition took for that day
 * moved into it first. A drop needs the parent to itself for a moment: the lock is waited for at
 * most a second (charges queue behind a waiting DROP), and a drop that could not have it is
 * tried again at the next pass. Answers what it did.
 */
export const SVC_REQUEST_LOG_PARTITIONS = {
  name: 'svc_request_log_partitions',
  sql: `create or replace function svc_request_log_partitions(p_today date, p_days_ahead integer, p_keep_days integer)
 RETURNS TABLE(partitions_made integer, partitions_dropped integer, rows_moved bigint)
 LANGUAGE plpgsql
AS $function$
  declare
    v_day date;
    v_name text;
    v_lo timestamptz;
    v_hi timestamptz;
    v_first_kept date;
    v_part record;
    v_n bigint;
  begin
    perform pg_advisory_xact_lock(hashtext('svc_request_log_partitions'));
    perform set_config('lock_timeout', '1s', true);
    partitions_made := 0;
    partitions_dropped := 0;
    rows_moved := 0;
    v_first_kept := case when p_keep_days > 0 then p_today - p_keep_days else 'infinity'::date end;

    if p_keep_days > 0 then
      for i in 0 .. greatest(p_days_ahead, 0) loop
        v_day := p_today + i;
        v_name := 'request_log_' || to_char(v_day, 'YYYYMMDD');
        continue when to_regclass(v_name) is not null;
        v_lo := v_day::timestamp at time zone 'UTC';
        v_hi := (v_day + 1)::timestamp at time zone 'UTC';
        begin
          execute format('create table %I (like request_log including defaults)', v_name);
          execute format('with m as (delete from request_log_default where created >= $1 and created < $2 returning *) insert into %I select * from m', v_name)
            using v_lo, v_hi;
          get diagnostics v_n = row_count;
          execute format('alter table request_log attach partition %I for values from (%L) to (%L)', v_name, v_lo, v_hi);
          rows_moved := rows_moved + v_n;
          partitions_made := partitions_made + 1;
        exception when lock_not_available then
          -- Readers held the default partition past the lock timeout: the next pass makes it.
          null;
        end;
      end loop;
    end if;

    for v_part in
      select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'request_log'::regclass and c.relname ~ '^request_log_[0-9]{8}$'
       order by c.relname
    loop
      continue when to_date(substr(v_part.relname, 13), 'YYYYMMDD') >= v_first_kept;
      begin
        execute format('drop table %I', v_part.relname);
        partitions_dropped := partitions_dropped + 1;
      exception when lock_not_available then
        null;
      end;
    end loop;
    if p_keep_days > 0 then
      delete from request_log_default where created < (v_first_kept::timestamp at time zone 'UTC');
    else
      delete from request_log_default;
    end if;
    return next;
  end $function$`,
};
