/**
 * The check a caller-supplied URL (`image_url`, `video_url`, `reference_image_urls[i]`, a
 * webhook `url`) passes when a request is accepted, so an obviously bad URL is a 400 naming the
 * field now rather than a failed job later.
 *
 * This is a courtesy, not the defence: DNS can change between now and the fetch (rebinding),
 * so SafeHttpClient repeats the address check after its own resolution, at connect time. That is
 * also why a name that cannot be resolved here is accepted: this machine may be offline, and
 * the fetch will fail (or be refused) later if the name turns out bad.
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { invalidRequest } from '../../domain/errors/domain-error';
import { FIELD, words, type FieldPath } from '../../domain/errors/field-path';
import { classifyAddress, type AddressCategory } from './address-policy';

export const MAX_URL_LENGTH = 2048;

/** ASCII control characters (C0 and DEL) and any whitespace, Unicode's included. */
// eslint-disable-next-line no-control-regex
const CONTROL_OR_SPACE = /[\u0000-\u001f\u007f]|\s/;

/** How long acceptance waits for DNS before giving up and accepting the URL. */
export const LOOKUP_TIMEOUT_MS = 2000;

/** Resolves a host name to all its addresses, like `dns.promises.lookup(host, { all: true })`. */
export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface CallerUrlOptions {
  /** The field named in the 400, e.g. `['image_url']`, `['reference_image_urls', 2]`, `['url']`. */
  path: FieldPath;
  /**
   * Whether plain http is allowed. Source media: true. Webhooks: only when WEBHOOK_ALLOW_LOCAL
   * is set (pass `allowHttp: allowLocal`), because a webhook carries a signed payload.
   */
  allowHttp: boolean;
  /** Skip the address checks entirely (local development and tests: WEBHOOK_ALLOW_LOCAL). */
  allowLocal: boolean;
  /** Injected in tests; defaults to the system resolver. */
  lookup?: HostLookup;
  /** Defaults to LOOKUP_TIMEOUT_MS. */
  lookupTimeoutMs?: number;
}

const systemLookup: HostLookup = (host) => dns.lookup(host, { all: true, verbatim: true });

const DESCRIBE: Record<AddressCategory, string> = {
  invalid: 'an invalid',
  unspecified: 'an unspecified',
  loopback: 'a loopback',
  private: 'a private',
  'link-local': 'a link-local',
  metadata: 'a cloud metadata',
  shared: 'a shared (carrier-grade NAT)',
  multicast: 'a multicast',
  reserved: 'a reserved',
};

/**
 * Validates a caller-supplied URL and returns it normalised (WHATWG serialisation, so
 * `https://EXAMPLE.com` becomes `https://example.com/` and `http://2130706433/` is seen as
 * 127.0.0.1). Throws an invalid_request_error naming `opts.path` when it is refused.
 */
export async function checkCallerUrl(raw: unknown, opts: CallerUrlOptions): Promise<string> {
  const refuse = (why: string) => invalidRequest(words`${FIELD} ${why}`, opts.path);

  if (typeof raw !== 'string' || raw.trim() === '') throw refuse('must be a non-empty URL string.');
  if (raw.length > MAX_URL_LENGTH) throw refuse(`must be at most ${MAX_URL_LENGTH} characters long.`);

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a valid absolute URL.');
  }

  // The URL parser drops tabs and line breaks anywhere and trims spaces and control characters at
  // the ends, so `https://example.com/x\r\nX-Injected: 1` was stored as another URL than the one
  // sent (and `exa\tmple.com` as example.com). What the caller sent must be what is stored.
  if (CONTROL_OR_SPACE.test(raw)) throw refuse('must not contain control characters or whitespace (write a space as %20).');
  // A backslash is a slash to this parser (and browsers) but not to every one: in
  // `https://example.com\@127.0.0.1/` this check sees the host example.com, and a provider whose
  // parser follows RFC 3986 (Python's urlsplit, say) fetches from 127.0.0.1.
  if (raw.includes('\\')) throw refuse('must not contain a backslash (write it as %5C).');

  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowHttp)) {
    throw refuse(opts.allowHttp ? 'must use the http or https scheme.' : 'must use the https scheme.');
  }
  // Credentials would be sent to (or logged by) whoever serves the URL, and `user@host` is a
  // classic way to disguise the real host from a human reader.
  if (url.username !== '' || url.password !== '') throw refuse('must not contain a username or password.');
  if (url.hostname === '') throw refuse('must have a host.');
  // Port 0 is no port anyone listens on: a connection to it can only fail.
  if (url.port === '0') throw refuse('must not use port 0.');

  const normalised = url.href;
  // Normalisation can lengthen a URL (percent-encoding), so check again.
  if (normalised.length > MAX_URL_LENGTH) throw refuse(`must be at most ${MAX_URL_LENGTH} characters long.`);
  if (opts.allowLocal) return normalised;

  // URL keeps the brackets of an IPv6 literal in `hostname`; a trailing dot is the same name.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');

  if (isIP(host)) {
    const category = classifyAddress(host);
    if (category) throw refuse(`must not point to ${DESCRIBE[category]} address (${host}).`);
    return normalised;
  }

  // RFC 6761: `localhost` and every name under it are the local machine, whatever DNS says.
  if (host === 'localhost' || host.endsWith('.localhost')) {
    throw refuse('must not point to the local machine (localhost).');
  }
  // Names that only mean something inside a network. A name that does not resolve here is
  // accepted (see the file comment), and for image URLs the provider fetches, nothing re-checks
  // it later: these are refused by their form.
  const internal = internalNameReason(host.toLowerCase());
  if (internal) throw refuse(`must not point to ${internal}.`);

  const addresses = await resolveOrGiveUp(host, opts.lookup ?? systemLookup, opts.lookupTimeoutMs ?? LOOKUP_TIMEOUT_MS);
  // Refuse if ANY address is forbidden: the client may pick any of them when it connects.
  for (const { address } of addresses) {
    const category = classifyAddress(address);
    // The resolved address is not echoed back: it would let a caller map our internal DNS.
    if (category) throw refuse(`must not point to a host that resolves to ${DESCRIBE[category]} address.`);
  }
  return normalised;
}

/**
 * Addresses for `host`, or [] when resolution fails or takes too long. Failing open is deliberate
 * (see the file comment): the outbound client re-checks after its own lookup.
 */
async function resolveOrGiveUp(host: string, lookup: HostLookup, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((resolve) => {
    timer = setTimeout(() => resolve([]), timeoutMs);
    timer.unref();
  });
  // The lookup cannot be cancelled; make sure a late rejection is not reported as unhandled.
  const attempt = Promise.resolve()
    .then(() => lookup(host))
    .catch(() => [] as Array<{ address: string; family: number }>);
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Suffixes reserved for, or used by convention for, names inside a private network (RFC 6762, RFC 8375, cloud and cluster DNS). */
const INTERNAL_SUFFIXES = ['.internal', '.local', '.localdomain', '.home.arpa', '.lan', '.intranet', '.corp', '.svc', '.cluster.local'];

/** Why `host` (a name, lower case, no trailing dot) can only be an inside name; null for a public-looking one. */
export function internalNameReason(host: string): string | null {
  // A public host has a dot: `metadata`, `vm`, `printer` are names a local resolver completes.
  if (!host.includes('.')) return 'a name without a domain (a local network name)';
  if (INTERNAL_SUFFIXES.some((suffix) => host.endsWith(suffix) || host === suffix.slice(1))) return 'a private network name';
  // Wildcard DNS services answer the address written in the name (127.0.0.1.nip.io, 10-0-0-1.sslip.io).
  const embedded = /(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=[.-])/.exec(host);
  if (embedded) {
    const address = embedded.slice(1, 5).join('.');
    const category = isIP(address) ? classifyAddress(address) : null;
    if (category) return `a name that spells ${DESCRIBE[category]} address`;
  }
  // Their other spellings: eight hex digits (7f000001.nip.io, app-7f000001.nip.io) and IPv6 with
  // dashes for colons (--1.sslip.io is ::1).
  for (const label of host.split('.')) {
    const spelled = [ipv6OfDashes(label), ...label.split('-').map(ipv4OfHex)];
    for (const address of spelled) {
      const category = address ? classifyAddress(address) : null;
      if (category) return `a name that spells ${DESCRIBE[category]} address`;
    }
  }
  return null;
}

/** `7f000001` → `127.0.0.1`; null unless exactly eight hex digits. */
function ipv4OfHex(part: string): string | null {
  if (!/^[0-9a-f]{8}$/.test(part)) return null;
  return [0, 2, 4, 6].map((i) => parseInt(part.slice(i, i + 2), 16)).join('.');
}

/** `--1` → `::1`, `fe80--1` → `fe80::1`; null unless the label, dashes read as colons, is an IPv6 address. */
function ipv6OfDashes(label: string): string | null {
  if (!label.includes('-')) return null;
  const address = label.replace(/-/g, ':');
  return isIP(address) === 6 ? address : null;
}
