import type { Client } from 'graphql-ws';
import { saveCredential, type ConsoleConfig, type Credential } from '../auth/session';
import { refreshOidcIdToken } from '../auth/oidc';
import { RenewingToken } from '../auth/renewing-token';
import type { Bearer } from './bearer';
import { liveClient } from './live';
import { trackLiveStatus, type LiveStatus } from './live-status';

/** What a signed-in page talks to the gateway with, for as long as the sign-in lasts. */
export interface Connection {
  /** For HTTP calls; for an OIDC sign-in, the token renewed in place. */
  bearer: Bearer;
  live: Client;
  liveStatus: LiveStatus;
  /** Stops renewing and closes the socket; settles once a renewal already out is back, so it cannot store tokens after a sign-out. */
  close(): Promise<void>;
}

/**
 * An OIDC sign-in's ID token is renewed before it expires (refresh token, see oidc.ts); each new
 * one replaces the stored credential, so a reload keeps it. Other credentials (an API key, a
 * development ID token) are used as they are. `onEnded`: the provider refused a renewal.
 */
export function openConnection(credential: Credential, config: ConsoleConfig | null, onEnded: () => void): Connection {
  let renewing: RenewingToken | null = null;
  if (credential.kind === 'idToken' && credential.via === 'oidc' && config) {
    renewing = new RenewingToken(credential.token, () => refreshOidcIdToken(config), {
      renewed: (token) => saveCredential({ ...credential, token }),
      ended: onEnded,
    });
  }
  const bearer: Bearer = renewing ?? credential.token;
  const live = liveClient(bearer);
  const liveStatus = trackLiveStatus(live);
  renewing?.start();
  return {
    bearer,
    live,
    liveStatus,
    close: async () => {
      // graphql-ws's dispose rejects when it closes a socket still connecting: nothing to report then.
      void Promise.resolve(live.dispose()).catch(() => undefined);
      await renewing?.stop();
    },
  };
}
