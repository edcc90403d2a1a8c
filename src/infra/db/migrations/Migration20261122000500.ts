import { Migration } from '@mikro-orm/migrations';

/**
 * Credit leases (RFC 4006-style quota grants): an instance takes a lease of credits from an
 * account for one key (one conditional debit, a `lease` ledger entry, counted against the key's
 * daily cap), serves calls from it in memory, and records each call's charge as a
 * `lease_charges` row — many group-committed in one transaction, before their responses go out.
 * Closing a lease returns what its recorded charges did not use, once (`lease_return`).
 *
 * The account ledger shows the lease and its return; the calls it paid for are the lease's
 * charges (the escrow's own ledger): for a closed lease, amount − returned = Σ its charges.
 * A call whose usage outgrew its lease is charged the excess directly (a `charge` entry, as far
 * as the balance goes) and the rest is recorded as uncollected, never as a negative balance.
 *
 * Money rules live here, in SQL, as the hold functions before them do: the TypeScript side only
 * decides when to call them.
 */
export class Migration20261122000500 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table ledger_entries drop constraint ledger_entries_kind_check`);
    this.addSql(`alter table ledger_entries add constraint ledger_entries_kind_check
      check (kind in ('grant', 'charge', 'refund', 'hold', 'release', 'lease', 'lease_return'))`);
    this.addSql(`create unique index ledger_entries_lease_return_once on ledger_entries (reference) where kind = 'lease_return'`);

    this.addSql(`create table credit_leases (
      id text primary key,
      account_id text not null references accounts(id),
      api_key_id text not null,
      instance_id text not null,
      day date not null,
      amount_micro bigint not null check (amount_micro > 0),
      spent_micro bigint not null default 0 check (spent_micro >= 0 and spent_micro <= amount_micro),
      heartbeat_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      closed_at timestamptz)`);
    this.addSql(`create index credit_leases_open_idx on credit_leases (heartbeat_at) where closed_at is null`);
    this.addSql(`create index credit_leases_account_open_idx on credit_leases (account_id) where closed_at is null`);

    // Numbered from the ledger's own sequence, so the account's statement can list ledger entries
    // and lease charges together in one order (GET /account/ledger-entries).
    this.addSql(`create table lease_charges (
      id bigint not null default nextval('ledger_entries_id_seq') unique,
      request_id text primary key,
      lease_id text not null references credit_leases(id),
      account_id text not null,
      api_key_id text not null,
      model text,
      amount_micro bigint not null check (amount_micro >= 0),
      created_at timestamptz not null default now())`);
    this.addSql(`create index lease_charges_lease_idx on lease_charges (lease_id)`);
    this.addSql(`create index lease_charges_account_time_idx on lease_charges (account_id, created_at)`);

    this.addSql(`create table uncollected_charges (
      request_id text primary key,
      account_id text not null,
      api_key_id text not null,
      model text,
      amount_micro bigint not null check (amount_micro > 0),
      created_at timestamptz not null default now())`);

    // Takes a lease of at least p_min (the call at hand) and up to p_want, but never more than a
    // quarter of the balance or half of what the key's cap has left: other keys and instances
    // keep room, and an account can be spent down to its last call.
    // Answers the amount leased, -1 when the balance cannot cover p_min, -2 for the daily cap.
    // Lock order as everywhere: the key's daily-spend row, then the account row.

    // Closes a lease once: what its recorded charges did not use goes back to the balance and
    // off the key's day. Answers the amount returned, or -1 when it was closed already.

    // Records a batch of calls' charges in one transaction. Each item: the request id, its
    // lease, account, key and model, the part paid from the lease, and any excess beyond it,
    // which is debited from the balance as far as it goes (the rest recorded as uncollected).
    // An item whose lease is closed or too small is refused (status 1) and nothing of it is
    // written; a request id recorded before is a no-op (status 0, idempotent).
    // Answers one row per item: (request_id, status, charged).
  }
}
