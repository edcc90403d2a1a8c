import { OperatorAccess } from '../../../src/domain/operators/operator-access';
import { unauthenticated } from '../../../src/domain/errors/domain-error';

/** A verifier that knows the ID tokens `id:<subject>` and refuses anything else. */
const verifier = {
  verify: async (token: string) => {
    if (!token.startsWith('id:')) throw unauthenticated('Invalid ID token.');
    return { issuer: 'https://id.example', subject: token.slice(3), usableUntil: 1_000 };
  },
};
const TOKEN = 'operator-token-0123456789';

test('ADMIN_TOKEN is the actor `token`; a listed subject is `sub:<subject>`; anyone else known is permission_denied', async () => {
  const access = new OperatorAccess({ adminToken: TOKEN, subjects: ['ops-alice'] }, verifier);
  expect(access.enabled).toBe(true);
  await expect(access.authenticate(TOKEN, 'GET /admin/audit')).resolves.toBe('token');
  await expect(access.authenticate('id:ops-alice', 'GET /admin/audit')).resolves.toBe('sub:ops-alice');
  await expect(access.authenticate('id:customer', 'GET /admin/audit')).rejects.toMatchObject({
    type: 'permission_denied',
    code: 'permission_denied',
    status: 403,
  });
  // Nothing like a pattern: a subject is listed whole, or not at all.
  await expect(access.authenticate('id:ops-alice2', 'GET /admin/audit')).rejects.toMatchObject({ type: 'permission_denied' });
  await expect(access.authenticate(`${TOKEN}x`, 'GET /admin/audit')).rejects.toMatchObject({ type: 'authentication_error' });
  await expect(access.authenticate('svc_live_AAAAAAAAAAAAAAAA_x', 'GET /admin/audit')).rejects.toMatchObject({ type: 'authentication_error' });
  await expect(access.authenticate(null, 'GET /admin/audit')).rejects.toMatchObject({ type: 'authentication_error' });
  expect(access.isAdminToken(TOKEN)).toBe(true);
  expect(access.isAdminToken(TOKEN.slice(0, -1))).toBe(false);
  expect(access.actorOfSubject('ops-alice')).toBe('sub:ops-alice');
  expect(access.actorOfSubject('customer')).toBeNull();
});

test('without ADMIN_TOKEN and ADMIN_SUBJECTS there is no operator and /admin does not exist; either alone is enough', async () => {
  const none = new OperatorAccess({ subjects: [] }, verifier);
  expect(none.enabled).toBe(false);
  expect(none.isAdminToken('')).toBe(false);
  await expect(none.authenticate(TOKEN, 'GET /admin/upstreams')).rejects.toMatchObject({ type: 'not_found_error', code: 'route_not_found' });
  const subjectsOnly = new OperatorAccess({ subjects: ['ops-bob'] }, verifier);
  await expect(subjectsOnly.authenticate('id:ops-bob', 'GET /admin/upstreams')).resolves.toBe('sub:ops-bob');
  await expect(subjectsOnly.authenticate(TOKEN, 'GET /admin/upstreams')).rejects.toMatchObject({ type: 'authentication_error' });
  const tokenOnly = new OperatorAccess({ adminToken: TOKEN, subjects: [] }, verifier);
  await expect(tokenOnly.authenticate('id:ops-bob', 'GET /admin/upstreams')).rejects.toMatchObject({ type: 'permission_denied' });
});
