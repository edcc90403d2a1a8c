import { Migration } from '@mikro-orm/migrations';

/**
 * Purchases of credits through Stripe Checkout: one row per Checkout Session (its id is the
 * purchase's), written `pending` when the session is made, what it grants fixed then; completed
 * once, with the payment intent its refunds are found by; what refunds took back, and what they
 * could not (the credits were spent), kept on the row.
 *
 * A purchase's grant is a `grant` entry whose reference is the session: the unique index makes it
 * once per session whatever the deliveries, beside the row's own move from `pending`. svc_grant
 * takes that reference, so its three-argument form is dropped to be created anew from
 * src/infra/db/functions (database-functions.ts).
 */
export class Migration20261208000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table purchases (
      id text primary key,
      account_id text not null references accounts(id),
      credits_micro bigint not null check (credits_micro > 0),
      amount_cents bigint not null check (amount_cents > 0),
      status text not null check (status in ('pending', 'completed', 'partially_refunded', 'refunded', 'expired', 'failed')),
      payment_intent text,
      refunded_cents bigint not null default 0 check (refunded_cents >= 0),
      taken_back_micro bigint not null default 0 check (taken_back_micro >= 0),
      shortfall_micro bigint not null default 0 check (shortfall_micro >= 0),
      created_at timestamptz not null default now(),
      completed_at timestamptz)`);
    this.addSql(`create index purchases_account_idx on purchases (account_id, created_at desc, id desc)`);
    this.addSql(`create unique index purchases_payment_intent_idx on purchases (payment_intent) where payment_intent is not null`);
    this.addSql(`create unique index ledger_entries_grant_once_idx on ledger_entries (reference)
      where kind = 'grant' and amount_micro > 0 and reference is not null`);
    this.addSql(`drop function if exists svc_grant(text, bigint, text)`);
    this.addSql(`delete from db_functions where name = 'svc_grant'`);
  }

  async down(): Promise<void> {
    this.addSql(`drop index ledger_entries_grant_once_idx`);
    this.addSql(`drop table purchases`);
  }
}
