/** API-key principals as the key authenticator hands them to the services. */
import type { KeyPrincipal } from '../../../src/domain/keys/principal';
import { NO_BUDGETS } from '../../../src/domain/credits/budgets';

export const liveKey = (overrides: Partial<KeyPrincipal> = {}): KeyPrincipal => ({
  kind: 'key',
  keyId: 'svc_live_aaaaaaaaaaaaaaaa',
  accountId: 'acct_a',
  mode: 'live',
  allowedModels: null,
  blockedModels: null,
  budgets: NO_BUDGETS,
  ...overrides,
});

export const testKey = (overrides: Partial<KeyPrincipal> = {}): KeyPrincipal => liveKey({ keyId: 'svc_test_aaaaaaaaaaaaaaaa', mode: 'test', ...overrides });
