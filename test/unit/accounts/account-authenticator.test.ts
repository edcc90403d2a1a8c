import { AccountAuthenticator } from '../../../src/domain/accounts/account-authenticator';
import type { AccountService } from '../../../src/domain/accounts/account-service';
import { unauthenticated } from '../../../src/domain/errors/domain-error';

/** A verifier that knows two tokens, and an account service that counts its upserts. */
function rig() {
  const tokens: Record<string, { issuer: string; subject: string; usableUntil: number }> = {
    alice: { issuer: 'https://id.example', subject: 'alice', usableUntil: 1_000 },
    bob: { issuer: 'https://id.example', subject: 'bob', usableUntil: 2_000 },
  };
  let upserts = 0;
  const accounts = {
    findOrCreate: async ({ subject }: { subject: string }) => (upserts++, { id: `acct_${subject}` }),
  } as unknown as AccountService;
  const verifier = {
    verify: async (token: string) => {
      const who = tokens[token];
      if (!who) throw unauthenticated('Invalid ID token.');
      return who;
    },
  };
  return { auth: new AccountAuthenticator(verifier, accounts), tokens, upserts: () => upserts };
}

test("an identity's account is looked up once; the token is verified every time", async () => {
  const { auth, tokens, upserts } = rig();
  expect(await auth.authenticate('alice')).toEqual({ id: 'acct_alice', subject: 'alice', usableUntil: 1_000 });
  expect(await auth.authenticate('alice')).toEqual({ id: 'acct_alice', subject: 'alice', usableUntil: 1_000 });
  expect(upserts()).toBe(1);
  expect(await auth.authenticate('bob')).toEqual({ id: 'acct_bob', subject: 'bob', usableUntil: 2_000 });
  expect(upserts()).toBe(2);
  // The identity provider stops vouching for the token: remembered accounts do not help it.
  delete tokens.alice;
  await expect(auth.authenticate('alice')).rejects.toMatchObject({ type: 'authentication_error' });
});
