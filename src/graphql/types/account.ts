import { Field, Float, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { Account } from '../../domain/accounts/account-service';
import type { ApiKey } from '../../domain/keys/key-record';
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

@ObjectType('ApiKey', { description: 'The key record of CONTRACT.md; never its secret.' })
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => ApiKeyMode) mode!: ApiKeyMode;
  @Field(() => [String], { nullable: true }) allowedModels!: string[] | null;
  @Field(() => [String], { nullable: true }) blockedModels!: string[] | null;
  @Field(() => Float, { nullable: true, description: 'Credits per UTC day (live keys).' }) dailySpendCap!: number | null;
  @Field(() => ApiKeyWebhook, { nullable: true }) webhook!: ApiKeyWebhook | null;
  @Field(() => DateTimeScalar) created!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) lastUsed!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'From then on the key answers authentication_error (reason api_key_expired); null: never.' })
  expiresAt!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'When its secret was last replaced (rotateApiKey); null: never.' })
  rotatedAt!: Date | null;
}

@ObjectType('CreatedApiKey', { description: 'A new key: the record plus its secret, shown this once.' })
export class CreatedApiKey extends ApiKeyType {
  @Field(() => String) key!: string;
}

/** Written field by field (as REST's keyRecord) so no hash or secret can slip out. */
export const toApiKeyType = (k: ApiKey): ApiKeyType => ({
  id: k.id,
  name: k.name,
  mode: k.mode as ApiKeyMode,
  allowedModels: k.allowedModels,
  blockedModels: k.blockedModels,
  dailySpendCap: k.dailySpendCapMicro === null ? null : microToCredits(k.dailySpendCapMicro),
  webhook: k.webhookUrl ? { url: k.webhookUrl } : null,
  created: k.created,
  lastUsed: k.lastUsed,
  expiresAt: k.expiresAt,
  rotatedAt: k.rotatedAt,
});

@ObjectType('WebhookConfig')
export class WebhookConfig {
  @Field(() => String, { nullable: true, description: 'null: no webhook; polling is the only way to learn results.' })
  url!: string | null;
  @Field(() => String, { nullable: true, description: 'The signing secret; only when just created or regenerated.' })
  secret!: string | null;
}
