import { z } from 'zod';
import type { Account, AccountService } from '../accounts/account-service';
import type { Catalog } from '../catalog/catalog';
import type { CatalogReloader } from '../catalog/catalog-reload';
import type { CatalogData } from '../catalog/model';
import { microToCredits } from '../shared/money';
import { parseInput } from '../shared/validate';
import type { AuditLog, AuditState } from './audit-log';
import type { OperatorActor } from './operator-access';

const memberInput = z.object({ member: z.boolean() }).strict();

const accountFacts = (a: Account): AuditState => ({ balance: microToCredits(a.balanceMicro), member: a.member });

/** What the catalog is, in counts and route ids: enough to tell two apart, nothing an upstream is reached with. */
const catalogFacts = (data: CatalogData): AuditState => {
  const routes = new Set(data.models.flatMap((m) => m.routes.map((r) => r.id)));
  return { models: data.models.length, routes: [...routes].sort().join(',') };
};

/**
 * Every operator action, for both doors: each is the domain service's own operation with its
 * audit entry written in the same transaction, so the log has an entry for exactly the actions
 * that happened. The rules stay in the services (AccountService, CatalogReloader); this adds who
 * and what changed.
 */
export class OperatorActions {
  constructor(
    private readonly deps: {
      accounts: AccountService;
      audit: AuditLog;
      catalog: Catalog;
      catalogReload: CatalogReloader;
    },
  ) {}

  /** `{ credits, reason }`: a grant, or (negative) a take-back, never below zero. Answers the account after it. */
  grantCredits(actor: OperatorActor, accountId: string, input: unknown): Promise<Account> {
    return this.deps.accounts.adjustCredits(accountId, input, (tx, c) =>
      this.deps.audit.record(
        {
          actor,
          action: c.amountMicro < 0 ? 'credits.take_back' : 'credits.grant',
          target: accountId,
          before: accountFacts(c.before),
          after: {
            ...accountFacts(c.after),
            credits: microToCredits(c.amountMicro),
            reason: c.reason,
            ...(c.pendingMicro > 0 ? { pendingFromLeases: microToCredits(c.pendingMicro) } : {}),
          },
        },
        tx,
      ),
    );
  }

  /** `{ member }`: the member flag on or off. Answers the account. */
  setMember(actor: OperatorActor, accountId: string, input: unknown): Promise<Account> {
    const { member } = parseInput(memberInput, input);
    return this.deps.accounts.setMember(accountId, member, (tx, c) =>
      this.deps.audit.record({ actor, action: 'account.member', target: accountId, before: accountFacts(c.before), after: accountFacts(c.after) }, tx),
    );
  }

  /**
   * Re-reads MODELS_FILE (every instance takes it). Not a database change: its entry is written
   * once the new catalog runs here; a file refused (400) changes nothing and writes nothing.
   */
  async reloadCatalog(actor: OperatorActor): Promise<{ models: number }> {
    const before = catalogFacts(this.deps.catalog.data);
    const result = await this.deps.catalogReload.reload();
    await this.deps.audit.record({ actor, action: 'catalog.reload', target: 'catalog', before, after: catalogFacts(this.deps.catalog.data) });
    return result;
  }
}
