/**
 * The database side of credit leases, as the lease book, the charge batcher and the stream
 * starts use it: its SQL lives in src/infra/db/repositories/sql-lease-store.ts, each operation
 * one round trip, most of them to a SQL function where the money rules live (svc_take_lease,
 * svc_close_lease, svc_record_charges: src/infra/db/functions).
 */
import type { BudgetCrossing } from './budget-crossings';
import type { BudgetPeriod, Budgets } from './budgets';
import type { Shortfall } from './ledger-repository';
import type { RequestLogRow } from '../requests/call-log';

/** A lease asked of the balance: at least `minMicro`, up to `wantMicro`, within the key's budgets. */
export interface LeaseRequest {
  id: string;
  accountId: string;
  keyId: string;
  budgets: Budgets;
  minMicro: number;
  wantMicro: number;
  instanceId: string;
}

export interface LeaseGrant {
  id: string;
  amountMicro: number;
  /**
   * Taken with the key's spend at 80% of a budget or more (leases counted whole): its charges are
   * recorded by svc_record_charges, which tells the crossings of a budget's 80% and 100% they make.
   */
  watched: boolean;
}

export interface ChargeRow {
  requestId: string;
  leaseId: string;
  accountId: string;
  keyId: string;
  model: string | null;
  /** Paid from the lease. */
  leaseMicro: number;
  /** Beyond the lease: debited from the balance as far as it goes, the rest uncollected. */
  excessMicro: number;
  /**
   * Not charged, recorded as uncollected (reason `database_unavailable`): what a call answered
   * while the database could not be asked cost beyond its lease (see LeaseBook.commit).
   */
  waivedMicro?: number;
  /** The call's request-log row, written with the charge (its credits: what the charge took); kept with it in the journal. */
  log?: RequestLogRow;
  /** Of a watched lease (LeaseGrant.watched): recorded by svc_record_charges, never the one-statement path. */
  watched?: boolean;
}

/** A stream that has begun answering, paid from `leaseId`, and what its death would charge (its prompt and what it has relayed so far). */
export interface StreamStart {
  requestId: string;
  leaseId: string;
  accountId: string;
  keyId: string;
  model: string | null;
  owedMicro: number;
}

/** What became of a charge (ChargeOutcome.status), as svc_record_charges answers it. */
export const CHARGE_STATUS = {
  /** Recorded (or recorded before; a lease closed or too small by then is passed by and the balance charged directly). */
  recorded: 0,
  /** Refused: the lease is another account's; nothing written. */
  refused: 1,
  /**
   * Recorded from the balance because the database has no such lease (its take, which does not
   * wait for its WAL flush, was lost in a crash of the database): the lease is to be let go.
   */
  leaseLost: 2,
} as const;

/** Whether the database took the charge (recorded, from its lease or the balance), as opposed to refusing it. */
export const chargeTaken = (outcome: ChargeOutcome): boolean => outcome.status !== CHARGE_STATUS.refused;

export interface ChargeOutcome {
  requestId: string;
  /** One of CHARGE_STATUS. */
  status: number;
  chargedMicro: number;
  /** The budget thresholds the key's spend crossed with this charge (budget-crossings.ts), each told once. */
  crossings?: BudgetCrossing[];
}

/** Micro-credits per budget period. */
export type PeriodAmounts = Record<BudgetPeriod, number>;

export interface LeaseStore {
  /** A lease of the request's size, or what kept it from being taken. */
  take(request: LeaseRequest): Promise<LeaseGrant | Shortfall>;
  /** Returns what the lease's recorded charges did not use; -1 when it was closed already. */
  close(leaseId: string): Promise<number>;
  /** Records call charges within their leases, idempotently by request id (svc_record_charges). */
  record(rows: readonly ChargeRow[]): Promise<ChargeOutcome[]>;
  /** What a call was charged, or null when no charge of it is recorded (nothing in its lease, nothing from the balance, nothing uncollected). */
  recordedCharge(requestId: string): Promise<number | null>;
  /** Streams that have begun answering (stream-starts.ts): charged their prompt if their lease is closed before they settle. */
  writeStreamStarts(starts: readonly StreamStart[]): Promise<void>;
  /** What running streams owe now (it only grows). */
  updateStreamsOwed(items: ReadonlyArray<{ requestId: string; owedMicro: number }>): Promise<void>;
  /** The rows of streams whose charges are recorded. */
  forgetStreamStarts(requestIds: readonly string[]): Promise<void>;
  /** Marks this instance, and so every open lease it holds, alive (its lease rows are not touched). */
  heartbeat(instanceId: string): Promise<void>;
  /** Open leases whose holder stopped heartbeating `graceSeconds` ago (it crashed or lost the database). */
  stale(graceSeconds: number): Promise<string[]>;
  /** Forgets the holders silent for longer than `graceSeconds`; answers how many went. */
  forgetSilentHolders(graceSeconds: number): Promise<number>;
  /**
   * What calls in progress cannot take away: the account's balance shown (svc_shown_balance: its
   * leased, uncharged credits counted as its own) and, given a key, what the key's committed
   * charges spent in the database's day, week and month (svc_committed_spend: each period's spend
   * less what its open leases hold uncharged; zeros without a key).
   */
  fundsWhateverSettles(accountId: string, keyId: string | null): Promise<{ balanceMicro: number; keySpentMicro: PeriodAmounts }>;
  /** Open leases of an account, on every instance. */
  openOf(accountId: string): Promise<number>;
  /** Open leases of an account (or of one of its keys) held by other instances (to recall them). */
  openElsewhere(instanceId: string, accountId: string, keyId?: string): Promise<number>;
}
