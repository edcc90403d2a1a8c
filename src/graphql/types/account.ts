import { Field, Float, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { Account } from '../../domain/accounts/account-service';
import type { ApiKey } from '../../domain/keys/key-record';
import type { KeySpend } from '../../domain/keys/key-spend';
import { microToCredits } from '../../domain/shared/money';
import { DateTimeScalar } from '../scalars';

/** GraphQL names are upper case; the internal values are the REST ones, so inputs pass straight through. */
export enum ApiKeyMode {
  LIVE = 'live',
  TEST = 'test',
}
registerEnumType(ApiKeyMode, { name: 'ApiKeyMode' });

@ObjectType('AccountWebhook')
export class AccountWebhookType {
  @Field(() => String) url!: string;
}

/** A budget's period (UTC; a week from Monday, a month from the 1st); the internal values are the REST ones. */
export enum BudgetPeriodValue {
  DAY = 'day',
  WEEK = 'week',
  MONTH = 'month',
}
registerEnumType(BudgetPeriodValue, { name: 'BudgetPeriod' });

@ObjectType('Account')
export class AccountType {
  @Field(() => ID) id!: string;
  @Field(() => Float, { description: 'Credits; fractions allowed.' }) balance!: number;
  @Field(() => Boolean) member!: boolean;
  @Field(() => DateTimeScalar) created!: Date;
  @Field(() => Float, { nullable: true, description: 'Credits: a balance falling below it sends balance.low to the account webhook.' })
  lowBalanceAlert!: number | null;
  @Field(() => AccountWebhookType, { nullable: true, description: "Where the account's events go; never its secret." })
  webhook!: AccountWebhookType | null;
}

export const toAccountType = (a: Account): AccountType => ({
  id: a.id,
  balance: microToCredits(a.balanceMicro),
  member: a.member,
  created: a.created,
  lowBalanceAlert: a.lowBalanceAlertMicro === null ? null : microToCredits(a.lowBalanceAlertMicro),
  webhook: a.webhookUrl ? { url: a.webhookUrl } : null,
});

@ObjectType('ApiKeyWebhook')
export class ApiKeyWebhook {
  @Field(() => String) url!: string;
}

@ObjectType('KeyBudget', { description: "A budget of the key and its period's spend." })
export class KeyBudgetType {
  @Field(() => BudgetPeriodValue) period!: BudgetPeriodValue;
  @Field(() => Float, { description: 'Credits the key may spend in the period.' }) credits!: number;
  @Field(() => Float, { description: "Credits the key's committed charges spent in the period." }) spent!: number;
  @Field(() => DateTimeScalar, { description: "The period's end: its spend starts again from 0." }) resetsAt!: Date;
}

@ObjectType('KeySpend', { description: 'Credits the key spent in the current UTC day, week and month.' })
export class KeySpendType {
  @Field(() => Float) today!: number;
  @Field(() => Float) week!: number;
  @Field(() => Float) month!: number;
}

@ObjectType('ApiKey', { description: 'The key record of CONTRACT.md; never its secret.' })
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => ApiKeyMode) mode!: ApiKeyMode;
  @Field(() => [String], { nullable: true }) allowedModels!: string[] | null;
  @Field(() => [String], { nullable: true }) blockedModels!: string[] | null;
  @Field(() => Float, { nullable: true, description: "Credits per UTC day (live keys): the 'day' budget." }) dailySpendCap!: number | null;
  @Field(() => [KeyBudgetType], { description: 'Day, week and month, those the key has (live keys).' }) budgets!: KeyBudgetType[];
  @Field(() => KeySpendType) spend!: KeySpendType;
  @Field(() => ApiKeyWebhook, { nullable: true }) webhook!: ApiKeyWebhook | null;
  @Field(() => DateTimeScalar) created!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) lastUsed!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'From then on the key answers authentication_error (reason api_key_expired); null: never.' })
  expiresAt!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'When its secret was last replaced (rotateApiKey); null: never.' })
  rotatedAt!: Date | null;
  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'Until then the secret its last rotation replaced still works (the grace it was given); null: none does.',
  })
  previousSecretUntil!: Date | null;
}

@ObjectType('CreatedApiKey', { description: 'A new key: the record plus its secret, shown this once.' })
export class CreatedApiKey extends ApiKeyType {
  @Field(() => String) key!: string;
}

/** Written field by field (as REST's keyRecord) so no hash or secret can slip out. */
export const toApiKeyType = (k: ApiKey, spending: KeySpend): ApiKeyType => ({
  id: k.id,
  name: k.name,
  mode: k.mode as ApiKeyMode,
  allowedModels: k.allowedModels,
  blockedModels: k.blockedModels,
  dailySpendCap: k.dailySpendCapMicro === null ? null : microToCredits(k.dailySpendCapMicro),
  budgets: spending.budgets.map((b) => ({
    period: b.period as BudgetPeriodValue,
    credits: microToCredits(b.creditsMicro),
    spent: microToCredits(b.spentMicro),
    resetsAt: b.resetsAt,
  })),
  spend: { today: microToCredits(spending.spend.day), week: microToCredits(spending.spend.week), month: microToCredits(spending.spend.month) },
  webhook: k.webhookUrl ? { url: k.webhookUrl } : null,
  created: k.created,
  lastUsed: k.lastUsed,
  expiresAt: k.expiresAt,
  rotatedAt: k.rotatedAt,
  previousSecretUntil: k.previousSecretUntil,
});

@ObjectType('WebhookConfig')
export class WebhookConfig {
  @Field(() => String, { nullable: true, description: 'null: no webhook; polling is the only way to learn results.' })
  url!: string | null;
  @Field(() => String, { nullable: true, description: 'The signing secret; only when just created or regenerated.' })
  secret!: string | null;
}
