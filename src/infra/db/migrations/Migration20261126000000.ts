import { Migration } from '@mikro-orm/migrations';

/**
 * Streams cut by the death of their instance are charged their prompt and what they had relayed. Until now a stream whose
 * instance was SIGKILLed (or lost its machine) mid-answer was never charged: its reservation
 * lived only in that instance's memory, and the lease it came from went back whole, less its
 * recorded charges, when another instance closed it after the grace.
 *
 * `stream_starts`: a stream that has begun answering (its 200 is out) and has run for a moment
 * (stream-starts.ts) is written here with its lease and what it owes (its prompt and what it has
 * relayed, brought up to date every moment it runs on); its row goes once its charge is recorded.
 * `svc_close_lease` now first charges each stream of the lease that never settled (no
 * `lease_charges` row) what it owed, from the lease, as a client that left is charged, and
 * marks the row converted: a lease is only closed with calls
 * in flight when its instance stopped heartbeating, so those streams died with it (or it lost
 * the database for the grace). In the second case the stream ends later and its real charge
 * arrives, finding the call recorded: `svc_record_charges` then charges what it cost beyond what
 * was charged at the close, from the balance, as a late charge (migration 20261124000000).
 */

export class Migration20261126000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table stream_starts (
      request_id text primary key,
      lease_id text not null references credit_leases(id),
      account_id text not null,
      api_key_id text not null,
      model text,
      owed_micro bigint not null check (owed_micro >= 0),
      started_at timestamptz not null default now(),
      converted_micro bigint)`);
    this.addSql(`create index stream_starts_lease_idx on stream_starts (lease_id)`);
  }
}
