import { Migration } from '@mikro-orm/migrations';

/**
 * The delivery log names each attempt's event type (`video.completed`, `balance.low`, …), so a
 * listing says what was sent without a read of the event. Rows already logged take it from their
 * event: a key's video event from its id (`wh_<job>_completed` or `_failed`), an account event
 * from `account_events` (an event id matching neither, which no code writes, reads `unknown`
 * rather than stopping the migration).
 */
export class Migration20261207004200 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table webhook_deliveries add column event_type text`);
    this.addSql(`update webhook_deliveries d set event_type = case
        when d.event_id like 'wh\\_%\\_completed' then 'video.completed'
        when d.event_id like 'wh\\_%\\_failed' then 'video.failed'
        else coalesce((select e.type from account_events e where e.id = d.event_id), 'unknown') end`);
    this.addSql(`alter table webhook_deliveries alter column event_type set not null`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table webhook_deliveries drop column event_type`);
  }
}
