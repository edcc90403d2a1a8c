import { Ctx, Field, ObjectType, Resolver, Root, Subscription } from 'type-graphql';
import { requireAccount, type GraphQLContext } from '../context';
import { EventStream } from '../event-stream';
import { AccountType, toAccountType } from '../types/account';
import { PurchaseType, toPurchaseType } from '../types/purchase';

/** Events a slow subscriber may fall behind by before its stream ends with an error. */
const MAX_BUFFERED_EVENTS = 100;

/** What the stream carries: the purchase that moved, or none after a gap in the fan-out. */
interface AccountChange {
  accountId: string;
  purchaseId: string | null;
}

@ObjectType('AccountUpdate', { description: 'The account as it is after one of its purchases moved, and that purchase.' })
export class AccountUpdateType {
  @Field(() => AccountType, { description: 'Read when the update is sent: the balance of the moment.' }) account!: AccountType;
  @Field(() => PurchaseType, {
    nullable: true,
    description:
      'The purchase that was paid, refunded or closed unpaid; null when events may have been missed (the live fan-out was interrupted): read again what you show.',
  })
  purchase!: PurchaseType | null;
}

/** The caller's account's events, from whichever instance took the provider's webhook. */
export function watchAccount(ctx: GraphQLContext): EventStream<AccountChange> {
  const { accountId } = requireAccount(ctx);
  const bus = ctx.services.accountEvents;
  return new EventStream<AccountChange>((push) => {
    const off = bus.subscribe(accountId, (event) => push(event));
    const offResumed = bus.onResumed(() => push({ accountId, purchaseId: null }));
    return () => {
      off();
      offResumed();
    };
  }, MAX_BUFFERED_EVENTS);
}

@Resolver()
export class AccountSubscriptionResolver {
  @Subscription(() => AccountUpdateType, {
    description: "Each change of the caller's purchases (paid, refunded, closed unpaid) with the balance it left; an account owner's ID token.",
    subscribe: ({ context }) => watchAccount(context as GraphQLContext),
  })
  async accountUpdated(@Root() change: AccountChange, @Ctx() ctx: GraphQLContext): Promise<AccountUpdateType> {
    // The stream is the caller's account's own; its id is checked again on every read.
    const { accountId } = requireAccount(ctx);
    const [account, purchase] = await Promise.all([
      ctx.services.accounts.get(accountId),
      change.purchaseId === null ? null : ctx.services.purchases.get(accountId, change.purchaseId),
    ]);
    return { account: toAccountType(account), purchase: purchase && toPurchaseType(purchase) };
  }
}
