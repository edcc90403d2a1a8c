import { useTestGateway } from '../support/use-test-gateway';

/** The HTTP side of the console: redirects, its configuration, headers, the development sign-in page. */
const gw = useTestGateway();

/** Each answer read whole: a body left unread keeps its socket paused, open past the test's end. */
const raw = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(gw.url + path, { redirect: 'manual', ...init });
  const body = await res.text();
  return { status: res.status, headers: res.headers, text: async () => body, json: async (): Promise<unknown> => JSON.parse(body) };
};

test('/ and /console redirect to /console/, which is the app with a strict CSP', async () => {
  expect((await raw('/')).headers.get('location')).toBe('/console/');
  expect((await raw('/console')).headers.get('location')).toBe('/console/');
  const page = await raw('/console/');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/);
  expect(await page.text()).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js">/);
  // Deep links get the app too; assets are immutable.
  expect((await raw('/console/keys')).status).toBe(200);
  const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await (await raw('/console/')).text())![1];
  expect((await raw(asset)).headers.get('cache-control')).toContain('immutable');
  expect((await raw('/console/assets/missing.js')).status).toBe(404);
});

test('the console learns how to sign in from /console/config.json', async () => {
  const res = await raw('/console/config.json');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.json()).toEqual({ signIn: 'dev', devSignInUrl: '/dev-idp/sign-in' });
});

test('the development sign-in page: a labelled form; a user name becomes an ID token in the fragment; a bad one is a 400 naming the field', async () => {
  const form = await raw('/dev-idp/sign-in');
  const html = await form.text();
  expect(html).toContain('<label for="username">User name</label>');
  expect(html).toContain('<button type="submit">Sign in</button>');

  const post = (body: string) => raw('/dev-idp/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const ok = await post('username=ada.lovelace');
  expect(ok.status).toBe(303);
  const token = decodeURIComponent(/^\/console\/#id_token=(.+)$/.exec(ok.headers.get('location')!)![1]);
  const me = await gw.api('GET', '/account', { token });
  expect(me.status).toBe(200);
  expect((await post('username=ada.lovelace')).headers.get('location')).toMatch(/^\/console\/#id_token=/);

  for (const body of ['username=', 'username=%3Cscript%3E', `username=${'x'.repeat(65)}`, 'name=ada']) {
    const bad = await post(body);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ type: 'invalid_request_error', param: 'username' });
  }
  expect((await post(`username=${'x'.repeat(3000)}`)).status).toBe(413);
});

test("the development sign-in page carries the console's state through its form and back in the fragment; a malformed state is never echoed", async () => {
  const state = 'AbC_dEf-0123456789xyzw';
  const html = await (await raw(`/dev-idp/sign-in?state=${state}`)).text();
  expect(html).toContain(`<input type="hidden" name="state" value="${state}">`);
  // Not a state (markup, too short, too long): the page has no state field, and says where to start.
  for (const bad of ['%22%3E%3Cscript%3Ealert(1)%3C/script%3E', 'short', 'x'.repeat(129)]) {
    const page = await (await raw(`/dev-idp/sign-in?state=${bad}`)).text();
    expect(page).not.toContain('name="state"');
    expect(page).not.toContain('<script');
    expect(page).toContain('Start from the console');
  }

  const post = (body: string) => raw('/dev-idp/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const ok = await post(`username=ada&state=${state}`);
  expect(ok.status).toBe(303);
  expect(ok.headers.get('location')).toMatch(new RegExp(`^/console/#id_token=[\\w.-]+&state=${state}$`));
  const bad = await post('username=ada&state=%3Cb%3E');
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ type: 'invalid_request_error', param: 'state' });
});

test('the development sign-in form refuses posts from another site (login CSRF), as browsers mark them', async () => {
  const post = (headers: Record<string, string>) =>
    raw('/dev-idp/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: 'username=mallory',
      redirect: 'manual',
    });
  const host = new URL(gw.url).host;
  const crossSite: Array<Record<string, string>> = [
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
    { origin: 'https://evil.example' },
    { origin: 'null' },
    { origin: `http://${host}.evil.example` },
  ];
  for (const headers of crossSite) {
    const refused = await post(headers);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ type: 'permission_error', code: 'cross_site_sign_in' });
  }
  const sameSite: Array<Record<string, string>> = [{ 'sec-fetch-site': 'same-origin', origin: gw.url }, { origin: gw.url }, { 'sec-fetch-site': 'none' }];
  for (const headers of sameSite) {
    expect((await post(headers)).status).toBe(303);
  }
});
