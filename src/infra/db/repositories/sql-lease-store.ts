/**
 * The credit leases' SQL: each operation is one round trip to a SQL function, where the money
 * rules live (svc_take_lease, svc_close_lease, svc_record_charges: src/infra/db/functions), but
 * for the one statement that records a lone plain charge (below) and the stream-start rows. A
 * charge's request-log row (ChargeRow.log) goes in the same statement as the charge.
 */
import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { Shortfall } from '../../../domain/credits/ledger-repository';
import {
  CHARGE_STATUS,
  type ChargeOutcome,
  type ChargeRow,
  type LeaseGrant,
  type LeaseRequest,
  type LeaseStore,
  type PeriodAmounts,
  type StreamStart,
} from '../../../domain/credits/lease-store';
import type { BudgetCrossing } from '../../../domain/credits/budget-crossings';
import type { BudgetPeriod } from '../../../domain/credits/budgets';
import { chargeItemsJson } from './charge-items-json';
import type { RequestLogRow } from '../../../domain/requests/call-log';

/** svc_take_lease's refusals: -1 the balance, -2, -3, -4 the day's, week's, month's budget. */
const TAKE_REFUSALS: Record<number, Shortfall> = { [-2]: 'daily_cap', [-3]: 'week_budget', [-4]: 'month_budget' };

/** A crossing as svc_note_budget_crossings writes it in svc_record_charges' `crossings` (a JSON array, or null). */
interface CrossingRow {
  key: string;
  period: BudgetPeriod;
  starts: string;
  percent: 80 | 100;
  budget: number | string;
  spent: number | string;
}

function crossingsOf(column: CrossingRow[] | string | null): BudgetCrossing[] | undefined {
  const rows = typeof column === 'string' ? (JSON.parse(column) as CrossingRow[]) : column;
  if (!rows || rows.length === 0) return undefined;
  return rows.map((r) => ({
    keyId: r.key,
    period: r.period,
    periodStart: r.starts,
    percent: r.percent,
    budgetMicro: Number(r.budget),
    spentMicro: Number(r.spent),
  }));
}

/**
 * One charge within an open lease, as `svc_record_charges` records it:
 * the lease row key-share-locked, so a close (which locks it for update and then sums its charges)
 * either counts this charge or makes it find the lease closed; one insert; nothing when the
 * lease is closed, unknown, of another account, the call was recorded before, or the account has
 * a low-balance alert (the function checks it in the charge's transaction).
 */
const RECORD_ONE_WITHIN_OPEN_LEASE = `with open_lease as (
    select id from credit_leases where id = ? and account_id = ? and closed_at is null for key share
  ), recorded as (
    insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
    select ?::text, id, ?::text, ?::text, ?::text, ?::bigint from open_lease
     where not exists (select 1 from account_alerts where account_id = ? and low_balance_micro is not null)
    on conflict on constraint lease_charges_pkey do nothing
    returning request_id, amount_micro
  )`;
/** The lone charge alone. */
const RECORD_ONE = `${RECORD_ONE_WITHIN_OPEN_LEASE} select request_id from recorded`;
/**
 * The lone charge with its call's request-log row, written in the same statement when the charge
 * is: the row as svc_log_requests writes a charge item's (its credits what the lease paid, a row
 * written twice written once), from typed parameters. Through the function's JSON the statement
 * took about 0.1 ms more in pgbench, at one connection, on every call.
 */
const RECORD_ONE_LOGGED = `${RECORD_ONE_WITHIN_OPEN_LEASE}, logged as (
    insert into request_log (id, created, account_id, api_key_id, model, endpoint, status, credits_micro, prompt_tokens,
                             completion_tokens, images, seconds, latency_ms, idempotency_key, error_type, error_code, job_id)
    select ?::text, timestamptz 'epoch' + ?::bigint * interval '1 millisecond', ?::text, ?::text, ?::text, ?::text, ?::smallint,
           amount_micro, ?::integer, ?::integer, ?::integer, ?::integer, ?::integer, ?::text, ?::text, ?::text, ?::text
      from recorded
    on conflict do nothing
  ) select request_id from recorded`;

/** RECORD_ONE_LOGGED's parameters after the charge's: the row's own fields over the charge's, as svc_log_requests reads them (its credits are what was recorded). */
function logParams(log: RequestLogRow, charge: ChargeRow): unknown[] {
  return [
    log.id,
    log.createdMs,
    log.accountId,
    log.keyId,
    log.model ?? charge.model,
    log.endpoint,
    log.status,
    log.promptTokens,
    log.completionTokens,
    log.images,
    log.seconds,
    log.latencyMs,
    log.idempotencyKey,
    log.errorType,
    log.errorCode,
    log.jobId,
  ];
}

export class SqlLeaseStore implements LeaseStore {
  constructor(
    private readonly db: Database,
    /** Where the charge batches and lease takes go: the hot path's own connections when the adapter has them. */
    private readonly hot: SqlExecutor = db,
  ) {}

  /**
   * svc_take_lease answers the amount leased and whether it is watched, or a negative amount: what
   * refused it. On the hot path's connections: a key's first call after its lease went idle waits
   * on it, and must not queue behind the idle pass's closes on the general pool.
   */
  async take(request: LeaseRequest): Promise<LeaseGrant | Shortfall> {
    const row = await this.hot.one<{ leased: string | number; watch: boolean }>(`select leased, watch from svc_take_lease(?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      request.id,
      request.accountId,
      request.keyId,
      request.budgets.day,
      request.budgets.week,
      request.budgets.month,
      request.minMicro,
      request.wantMicro,
      request.instanceId,
    ]);
    const amount = Number(row?.leased);
    if (amount < 0) return TAKE_REFUSALS[amount] ?? 'balance';
    return { id: request.id, amountMicro: amount, watched: row?.watch === true };
  }

  /** Returns what the lease's recorded charges did not use; -1 when it was closed already. */
  async close(leaseId: string): Promise<number> {
    const row = await this.db.one<{ back: string | number }>(`select svc_close_lease(?) as back`, [leaseId]);
    return Number(row?.back);
  }

  async record(rows: readonly ChargeRow[]): Promise<ChargeOutcome[]> {
    const only = rows.length === 1 ? rows[0] : undefined;
    // A watched lease's charge is checked for the budget thresholds it crosses: the function does that.
    if (only && only.excessMicro === 0 && !only.waivedMicro && !only.watched) {
      // A batch of one plain charge (every call at low load): svc_record_charges' first pass as
      // one statement, without the function call around it (about 50–80 µs less a call in
      // pgbench). Whatever it does not record (a lease closed or unknown, a call recorded
      // before, an account with a low-balance alert) goes to the function, which decides it by
      // the money rules.
      const params: unknown[] = [only.leaseId, only.accountId, only.requestId, only.accountId, only.keyId, only.model, only.leaseMicro, only.accountId];
      if (only.log) params.push(...logParams(only.log, only));
      const recorded = await this.hot.all(only.log ? RECORD_ONE_LOGGED : RECORD_ONE, params);
      if (recorded.length === 1) return [{ requestId: only.requestId, status: CHARGE_STATUS.recorded, chargedMicro: only.leaseMicro }];
    }
    const out = await this.hot.all<{ request_id: string; status: number; charged: string | number; crossings: CrossingRow[] | string | null }>(
      `select request_id, status, charged, crossings from svc_record_charges(?::jsonb)`,
      [chargeItemsJson(rows)],
    );
    return out.map((o) => {
      const crossings = crossingsOf(o.crossings);
      return { requestId: o.request_id, status: Number(o.status), chargedMicro: Number(o.charged), ...(crossings ? { crossings } : {}) };
    });
  }

  /** What a call was charged, or null when no charge of it is recorded (nothing in its lease, nothing from the balance, nothing uncollected). */
  async recordedCharge(requestId: string): Promise<number | null> {
    const row = await this.db.one<{ leased: string | number | null; debited: string | number | null; uncollected: boolean }>(
      `select (select amount_micro from lease_charges where request_id = ?) as leased,
              (select -sum(amount_micro) from ledger_entries where kind = 'charge' and reference = ?) as debited,
              exists (select 1 from uncollected_charges where request_id = ?) as uncollected`,
      [requestId, requestId, requestId],
    );
    if (!row || (row.leased === null && row.debited === null && !row.uncollected)) return null;
    return Number(row.leased ?? 0) + Number(row.debited ?? 0);
  }

  /** Streams that have begun answering (stream-starts.ts): charged their prompt if their lease is closed before they settle. */
  async writeStreamStarts(starts: readonly StreamStart[]): Promise<void> {
    const items = starts.map((s) => ({
      request_id: s.requestId,
      lease_id: s.leaseId,
      account_id: s.accountId,
      api_key_id: s.keyId,
      model: s.model,
      owed_micro: s.owedMicro,
    }));
    // A stream settled meanwhile (its charge recorded) needs no row.
    await this.db.run(
      `insert into stream_starts (request_id, lease_id, account_id, api_key_id, model, owed_micro)
       select x.request_id, x.lease_id, x.account_id, x.api_key_id, x.model, x.owed_micro
         from jsonb_to_recordset(?::jsonb) as x(request_id text, lease_id text, account_id text, api_key_id text, model text, owed_micro bigint)
        where not exists (select 1 from lease_charges c where c.request_id = x.request_id)
       on conflict (request_id) do nothing`,
      [JSON.stringify(items)],
    );
  }

  /** What running streams owe now (it only grows). */
  async updateStreamsOwed(items: ReadonlyArray<{ requestId: string; owedMicro: number }>): Promise<void> {
    await this.db.run(
      `update stream_starts s set owed_micro = x.owed_micro
         from jsonb_to_recordset(?::jsonb) as x(request_id text, owed_micro bigint)
        where s.request_id = x.request_id and s.converted_micro is null and x.owed_micro > s.owed_micro`,
      [JSON.stringify(items.map((i) => ({ request_id: i.requestId, owed_micro: i.owedMicro })))],
    );
  }

  /** The rows of streams whose charges are recorded. */
  async forgetStreamStarts(requestIds: readonly string[]): Promise<void> {
    await this.db.run(`delete from stream_starts where request_id = any(?::text[]) and converted_micro is null`, [requestIds]);
  }

  /**
   * Marks this instance, and so every open lease it holds, alive: one row (its lease rows are
   * not touched, so the beat neither waits for the charges on them nor makes them wait).
   */
  async heartbeat(instanceId: string): Promise<void> {
    await this.db.run(
      `insert into lease_holders (instance_id, heartbeat_at) values (?, now())
       on conflict (instance_id) do update set heartbeat_at = excluded.heartbeat_at`,
      [instanceId],
    );
  }

  /**
   * Open leases whose holder stopped heartbeating `graceSeconds` ago (it crashed or lost the
   * database): neither the lease (taken then) nor its holder's row heard from since.
   */
  async stale(graceSeconds: number): Promise<string[]> {
    const rows = await this.db.all<{ id: string }>(
      `select l.id from credit_leases l left join lease_holders h on h.instance_id = l.instance_id
        where l.closed_at is null
          and greatest(l.heartbeat_at, h.heartbeat_at) < now() - make_interval(secs => ?)
        order by l.id limit 100`,
      [graceSeconds],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Forgets the holders silent for longer than `graceSeconds` (one row per process start would
   * otherwise pile up with every deploy). Safe whatever they still hold: a beat older than the
   * grace keeps no lease alive (see stale), so each lease's fate is the same with the row or
   * without it, and a holder that beats again writes its row anew. Answers how many went.
   */
  async forgetSilentHolders(graceSeconds: number): Promise<number> {
    return this.db.run(`delete from lease_holders where heartbeat_at < now() - make_interval(secs => ?)`, [graceSeconds]);
  }

  /**
   * The account's balance shown (svc_shown_balance: its leased, uncharged credits counted as its
   * own) and, given a key, what the key's committed charges spent in the database's day, week and
   * month (svc_committed_spend).
   */
  async fundsWhateverSettles(accountId: string, keyId: string | null): Promise<{ balanceMicro: number; keySpentMicro: PeriodAmounts }> {
    const row = await this.db.one<{ balance: string | number | null; day: string | number; week: string | number; month: string | number }>(
      `select svc_shown_balance(?) as balance, c.day_micro as day, c.week_micro as week, c.month_micro as month
         from svc_committed_spend(?, (now() at time zone 'UTC')::date) c`,
      [accountId, keyId],
    );
    return {
      balanceMicro: Number(row?.balance ?? 0),
      keySpentMicro: { day: Number(row?.day ?? 0), week: Number(row?.week ?? 0), month: Number(row?.month ?? 0) },
    };
  }

  /** Open leases of an account, on every instance. */
  async openOf(accountId: string): Promise<number> {
    const row = await this.db.one<{ n: string | number }>(`select count(*) as n from credit_leases where account_id = ? and closed_at is null`, [accountId]);
    return Number(row?.n ?? 0);
  }

  /** Open leases of an account (or of one of its keys) held by other instances (to recall them). */
  async openElsewhere(instanceId: string, accountId: string, keyId?: string): Promise<number> {
    const row = keyId
      ? await this.db.one<{ n: string | number }>(
          `select count(*) as n from credit_leases where account_id = ? and api_key_id = ? and closed_at is null and instance_id <> ?`,
          [accountId, keyId, instanceId],
        )
      : await this.db.one<{ n: string | number }>(`select count(*) as n from credit_leases where account_id = ? and closed_at is null and instance_id <> ?`, [
          accountId,
          instanceId,
        ]);
    return Number(row?.n ?? 0);
  }
}
