import { Migration } from '@mikro-orm/migrations';
import { RECORD_CHARGES_SQL as RECORD_WITHOUT_REFUND_SQL } from './Migration20261130000000';

/**
 * A stream charged its running estimate when its lease was closed under it (its instance looked
 * dead, or shut down with the stream's charge still waiting in its journal), whose real charge
 * is recorded later from the journal. The later charge adds what the usage came to beyond the
 * estimate and, when the usage is below it, gives the difference back, once (a `refund` entry,
 * unique per request, with the key's day given back as much), so the call is charged its usage
 * either way and never the estimate.
 */
const CONVERTED_BRANCH = `        v_from_lease := 0;
        v_excess := greatest(0, it.lease_part + it.excess - v_converted);
        charged := 0;`;

const CONVERTED_BRANCH_WITH_REFUND = `        v_from_lease := 0;
        v_excess := greatest(0, it.lease_part + it.excess - v_converted);
        charged := 0;
        -- The estimate charged at the close was more than the usage: the rest goes back, once.
        if v_converted > it.lease_part + it.excess then
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
            values (it.aid, v_converted - (it.lease_part + it.excess), 'refund', it.rid, it.kid,
                    'usage below the estimate charged when its lease closed', it.mdl)
            on conflict do nothing;
          if found then
            select l.day into v_day from credit_leases l where l.id = it.lid;
            update key_daily_spend set spent_micro = greatest(0, spent_micro - (v_converted - (it.lease_part + it.excess)))
             where api_key_id = it.kid and day = v_day;
            update accounts set balance_micro = balance_micro + (v_converted - (it.lease_part + it.excess)) where id = it.aid;
          end if;
        end if;`;

if (!RECORD_WITHOUT_REFUND_SQL.includes(CONVERTED_BRANCH)) throw new Error('svc_record_charges: the converted-stream branch was not found');
const RECORD_CHARGES_SQL = RECORD_WITHOUT_REFUND_SQL.replace(CONVERTED_BRANCH, CONVERTED_BRANCH_WITH_REFUND);

export class Migration20261203000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(RECORD_CHARGES_SQL);
  }

  async down(): Promise<void> {
    this.addSql(RECORD_WITHOUT_REFUND_SQL);
  }
}
