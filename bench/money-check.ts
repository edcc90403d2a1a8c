/**
 * After every gateway phase of the bench: the money must be exact. Waits for the calls still in
 * flight to settle, gives every idle lease back, then checks that every balance equals the sum of
 * its ledger entries and is not negative; that each answered call has exactly one charge and, for
 * non-streamed calls, that its x-svc-credits equals that charge; that the only other charges are
 * calls cut off when the phase ended (at most one per connection); that no hold or lease is left
 * open; that every closed lease gave back exactly its amount less the charges recorded on it
 * (else a balance could agree with its ledger while a call went free); that no key spent past
 * its daily cap, whichever instance charged it (the check reads the database all instances
 * share); and that nothing was recorded as uncollected. A failed check fails the bench.
 */
import type { Gateway } from '../src/gateway';
import type { SqlExecutor } from '../src/domain/ports/database';
import { MICRO_PER_CREDIT } from '../src/domain/shared/money';
import type { PhaseResult } from './phase';

export interface MoneyCheck {
  phase: string;
  answered: number;
  charges: number;
  /** Charged calls the client never saw complete (the phase's end cut them off). */
  cutOff: number;
  missing: number;
  mismatched: number;
  drift: number;
  openLeases: number;
  /** Closed leases whose return is not their amount less their charges. */
  leaseDrift: number;
  openHolds: number;
  pastCap: number;
  /** Charges recorded as uncollected (the balance or the cap could not cover what a call cost): none, in the bench. */
  uncollected: number;
  ok: boolean;
}

/**
 * The newest ledger id once the charges kept in the journal are recorded (so the warm-up's are
 * not counted in the phase): lease charges share the sequence, so later ones are above it.
 */
export async function ledgerMark(gateway: Gateway): Promise<number> {
  await gateway.services.leaseBook.recordKeptNow();
  return newestLedgerId(gateway.database.db);
}

/** The newest ledger or lease-charge id in the database, for a gateway that is not running here (bench/outside.ts). */
export async function newestLedgerId(db: SqlExecutor): Promise<number> {
  const row = await db.one<{ id: string | null }>(`select max(id) as id from (select id from ledger_entries union all select id from lease_charges) ids`);
  return Number(row?.id ?? 0);
}

/** What the check compares the database with: the calls answered since the mark, and how many more charges cut-off calls may explain. */
export interface AnsweredCalls {
  phase: string;
  answered: [string, number | null][];
  /** One per connection per segment: a call in flight when a segment ended is charged but never seen answered. */
  mayCutOff: number;
}

async function drain(gateway: Gateway): Promise<void> {
  const book = gateway.services.leaseBook;
  const until = Date.now() + 15_000;
  while (book.inFlightFor() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  // Charges the database did not take in time (CHARGE_DEADLINE_MS) wait in the journal.
  await book.recordKeptNow();
  await book.returnIdleNow();
}

export async function checkMoney(gateway: Gateway, phase: PhaseResult, sinceId: number): Promise<MoneyCheck> {
  await drain(gateway);
  return checkLedger(gateway.database.db, { phase: phase.id, answered: phase.answered ?? [], mayCutOff: phase.connections * (phase.segments ?? 1) }, sinceId);
}

/**
 * The check itself, on the database alone: for a gateway in this process once drain() has run,
 * or for a gateway process that has stopped (its shutdown settled its calls and gave its leases back).
 */
export async function checkLedger(db: SqlExecutor, calls: AnsweredCalls, sinceId: number): Promise<MoneyCheck> {
  // A call's charge: its lease_charges row plus what it took from the balance directly (an
  // excess, or all of it when it was recorded late, after its lease had closed).
  const rows = await db.all<{ request_id: string; amount_micro: string | number }>(
    `select request_id, sum(amount_micro) as amount_micro from (
       select request_id, amount_micro from lease_charges where id > ?
       union all select reference, -amount_micro from ledger_entries where kind = 'charge' and id > ?) c
     group by request_id`,
    [sinceId, sinceId],
  );
  const charged = new Map(rows.map((r) => [r.request_id, Number(r.amount_micro)]));
  let missing = 0;
  let mismatched = 0;
  for (const [id, credits] of calls.answered) {
    const amount = charged.get(id);
    if (amount === undefined) missing++;
    else if (credits !== null && Math.round(credits * MICRO_PER_CREDIT) !== amount) mismatched++;
  }
  const answered = calls.answered.length;
  const count = async (sql: string) => Number((await db.one<{ n: string | number }>(sql))?.n ?? 0);
  const drift = await count(
    `select count(*) as n from (select a.id from accounts a left join ledger_entries e on e.account_id = a.id
      group by a.id, a.balance_micro having a.balance_micro <> coalesce(sum(e.amount_micro), 0) or a.balance_micro < 0) d`,
  );
  const openLeases = await count(`select count(*) as n from credit_leases where closed_at is null`);
  const leaseDrift = await count(
    `select count(*) as n from credit_leases l
       left join (select lease_id, sum(amount_micro) as s from lease_charges group by lease_id) c on c.lease_id = l.id
       left join ledger_entries r on r.kind = 'lease_return' and r.reference = l.id
      where l.closed_at is not null and (r.amount_micro is null or r.amount_micro <> l.amount_micro - coalesce(c.s, 0))`,
  );
  const openHolds = await count(`select (count(*) filter (where kind = 'hold')) - (count(*) filter (where kind = 'release')) as n from ledger_entries`);
  const pastCap = await count(
    `select count(*) as n from key_daily_spend s join api_keys k on k.id = s.api_key_id
      where k.daily_spend_cap_micro is not null and s.spent_micro > k.daily_spend_cap_micro`,
  );
  const uncollected = await count(`select count(*) as n from uncollected_charges`);
  const cutOff = charged.size - (answered - missing);
  const ok =
    missing === 0 &&
    mismatched === 0 &&
    drift === 0 &&
    openLeases === 0 &&
    leaseDrift === 0 &&
    openHolds === 0 &&
    pastCap === 0 &&
    uncollected === 0 &&
    cutOff >= 0 &&
    cutOff <= calls.mayCutOff;
  return {
    phase: calls.phase,
    answered,
    charges: charged.size,
    cutOff,
    missing,
    mismatched,
    drift,
    openLeases,
    leaseDrift,
    openHolds,
    pastCap,
    uncollected,
    ok,
  };
}
