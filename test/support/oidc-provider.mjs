// A real OpenID provider (panva's oidc-provider) for the console's OIDC test, run as its own
// process (the package is ESM-only). Usage: node oidc-provider.mjs <port> <client_id> <redirect_uri>
// Prints `ready <issuer>` once listening, and one JSON line per authorization and token request
// (`{"seen":"auth",...}`) so the test can check the flow used authorization code with PKCE.
import Provider from 'oidc-provider';

const [port, clientId, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      application_type: 'web',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  pkce: { required: () => true },
  cookies: { keys: ['console-test-cookie-key-0123456789'] },
  features: { devInteractions: { enabled: true } },
  clientBasedCORS: (_ctx, origin, client) => client.redirectUris.some((uri) => new URL(uri).origin === origin),
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});
// The issuer is http on loopback: tell the provider the test knows what it is doing.
provider.proxy = false;

provider.use(async (ctx, next) => {
  if (ctx.path === '/auth') {
    const q = ctx.query;
    console.log(JSON.stringify({ seen: 'auth', response_type: q.response_type, code_challenge_method: q.code_challenge_method, code_challenge: Boolean(q.code_challenge) }));
  }
  await next();
  if (ctx.path === '/token' && ctx.method === 'POST') {
    const body = ctx.oidc?.params ?? {};
    console.log(JSON.stringify({ seen: 'token', grant_type: body.grant_type, code_verifier: Boolean(body.code_verifier), status: ctx.status }));
  }
});

provider.listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
