// A real OpenID provider (panva's oidc-provider) for the console's OIDC tests, run as its own
// process (the package is ESM-only). Usage: node oidc-provider.mjs <port> <client_id> <redirect_uri>
// Prints `ready <issuer>` once listening, and one JSON line per authorization, token and
// revocation request (`{"seen":"auth",...}`) so a test can check the flow the console used.
// ID_TOKEN_TTL (seconds, default the provider's 3600) sets the ID and access tokens' lifetime, so
// the renewal test can watch tokens expire in seconds while the sign-in test keeps the default.
import Provider from 'oidc-provider';

const [port, clientId, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const tokenTtl = Number(process.env.ID_TOKEN_TTL) || 3600;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      application_type: 'web',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
  ],
  pkce: { required: () => true },
  cookies: { keys: ['console-test-cookie-key-0123456789'] },
  features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
  // oidc-provider grants offline_access only with prompt=consent (OIDC Core 11), which the console
  // does not force. Issue the public client a refresh token anyway, as Keycloak does: without
  // offline_access it expires with the provider session, so signing out at the provider ends it.
  // Public clients' refresh tokens rotate on each use (the provider's default rotateRefreshToken).
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { IdToken: tokenTtl, AccessToken: tokenTtl },
  clientBasedCORS: (_ctx, origin, client) => client.redirectUris.some((uri) => new URL(uri).origin === origin),
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});
// The issuer is http on loopback: tell the provider the test knows what it is doing.
provider.proxy = false;

provider.use(async (ctx, next) => {
  if (ctx.path === '/auth') {
    const q = ctx.query;
    console.log(
      JSON.stringify({
        seen: 'auth',
        response_type: q.response_type,
        code_challenge_method: q.code_challenge_method,
        code_challenge: Boolean(q.code_challenge),
        scope: q.scope,
      }),
    );
  }
  await next();
  if (ctx.path === '/token' && ctx.method === 'POST') {
    const body = ctx.oidc?.params ?? {};
    const answer = ctx.body && typeof ctx.body === 'object' ? ctx.body : {};
    console.log(
      JSON.stringify({
        seen: 'token',
        grant_type: body.grant_type,
        code_verifier: Boolean(body.code_verifier),
        status: ctx.status,
        error: answer.error,
        refresh_token: Boolean(answer.refresh_token),
      }),
    );
  }
  if (ctx.path === '/token/revocation' && ctx.method === 'POST') {
    console.log(JSON.stringify({ seen: 'revocation', token_type_hint: ctx.oidc?.params?.token_type_hint, status: ctx.status }));
  }
});

provider.listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
