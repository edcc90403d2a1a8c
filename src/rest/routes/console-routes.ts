import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';
import { DomainError } from '../../domain/errors/domain-error';
import { packageRoot } from '../package-root';

/** How the console signs an owner in: the configured OIDC provider, or the development provider's page. */
export type ConsoleSignIn = { kind: 'oidc'; issuer: string; clientId?: string } | { kind: 'dev' };

/** dist/console beside the package root, from src/ (under Vitest) or dist/src/ (compiled) alike. */
export function defaultConsoleDir(from = __dirname): string {
  return join(packageRoot(from), 'dist', 'console');
}

const originOf = (url: string | undefined): string => {
  try {
    return url ? new URL(url).origin : '';
  } catch {
    return '';
  }
};

/** Everything the console loads comes from the gateway; it talks to /graphql (and the OIDC issuer). */
function contentSecurityPolicy(signIn: ConsoleSignIn, mediaOrigin: string): string {
  const issuer = signIn.kind === 'oidc' ? originOf(signIn.issuer) : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `media-src 'self' ${mediaOrigin}`.trim(),
    `connect-src 'self' ${issuer}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The web console (a static single-page app built by `npm run build` into dist/console) at
 * /console, and / redirecting there. /console/config.json tells it how to sign in.
 */
export function consoleRoutes(deps: { signIn: ConsoleSignIn; publicBaseUrl: () => string; dir?: string }): Router {
  const dir = deps.dir ?? defaultConsoleDir();
  const r = Router();
  r.get('/', (_req, res) => res.redirect(302, '/console/'));
  // Non-strict routing matches /console/ here too: only the bare path is redirected.
  r.get('/console', (req, res, next) => (req.originalUrl.split('?')[0] === '/console' ? res.redirect(301, '/console/') : next()));

  r.get('/console/config.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const s = deps.signIn;
    res.json(
      s.kind === 'oidc' ? { signIn: 'oidc', oidc: { issuer: s.issuer, clientId: s.clientId ?? null } } : { signIn: 'dev', devSignInUrl: '/dev-idp/sign-in' },
    );
  });

  r.use('/console', (_req, res, next) => {
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(deps.signIn, originOf(deps.publicBaseUrl())));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  r.use(
    '/console',
    express.static(dir, {
      index: 'index.html',
      fallthrough: true,
      setHeaders: (res, path) => {
        // File names under assets/ carry a content hash; index.html must be revalidated.
        res.setHeader('Cache-Control', path.includes(`${join('console', 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  // A deep link (/console/anything) gets the app; it routes on the URL fragment.
  r.get(/^\/console\/(?!assets\/).*/, (_req, res, next) => {
    const index = join(dir, 'index.html');
    if (!existsSync(index)) {
      next(new DomainError('service_unavailable', 'The console is not built: run `npm run build`.', { code: 'console_not_built' }));
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return r;
}
