/**
 * Which IP addresses the gateway must never talk to on a caller's behalf.
 *
 * Every URL a caller hands in (source media, webhooks) makes this server open a connection, so
 * a caller could aim it at the machine itself, the private network behind it or the cloud
 * metadata service (SSRF). This module is the single table of forbidden ranges; the
 * acceptance-time check (url-check.ts) and the outbound client (safe-http-client.ts) both ask it.
 *
 * It works on numbers, not strings: an IPv6 address is expanded to 16 bytes first, so the many
 * spellings of one address (`::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:0001`)
 * all land on the same answer. IPv6 forms that carry an IPv4 address inside them (mapped,
 * compatible, NAT64, 6to4, Teredo) are judged by the IPv4 address they would reach.
 */
import { isIP } from 'node:net';

/** Why an address is forbidden; `null` from `classifyAddress` means it is allowed. */
export type AddressCategory =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'shared'
  | 'multicast'
  | 'reserved';

type Rule = { bytes: number[]; prefix: number; category: AddressCategory };

function v4Rule(cidr: string, category: AddressCategory): Rule {
  const [addr, prefix] = cidr.split('/');
  return { bytes: parseV4(addr)!, prefix: Number(prefix), category };
}

function v6Rule(cidr: string, category: AddressCategory): Rule {
  const [addr, prefix] = cidr.split('/');
  return { bytes: parseV6(addr)!, prefix: Number(prefix), category };
}

/**
 * IPv4 ranges, most specific first (the first match names the reason). Besides the obvious
 * loopback/private/link-local ranges this includes everything IANA marks as not globally
 * reachable: a public media host never lives there, so refusing costs nothing and closes
 * odd corners (e.g. 192.0.0.192 is Oracle Cloud's metadata address, 100.100.100.200 Alibaba's).
 */
const V4_RULES: Rule[] = [
  v4Rule('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, DigitalOcean, OpenStack
  v4Rule('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 connects to the local host on Linux
  v4Rule('10.0.0.0/8', 'private'),
  v4Rule('100.64.0.0/10', 'shared'), // carrier-grade NAT; also Alibaba's metadata service
  v4Rule('127.0.0.0/8', 'loopback'),
  v4Rule('169.254.0.0/16', 'link-local'),
  v4Rule('172.16.0.0/12', 'private'),
  v4Rule('192.0.0.0/24', 'reserved'), // IETF protocol assignments (incl. Oracle metadata 192.0.0.192)
  v4Rule('192.0.2.0/24', 'reserved'), // TEST-NET-1
  v4Rule('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  v4Rule('192.168.0.0/16', 'private'),
  v4Rule('198.18.0.0/15', 'reserved'), // benchmarking
  v4Rule('198.51.100.0/24', 'reserved'), // TEST-NET-2
  v4Rule('203.0.113.0/24', 'reserved'), // TEST-NET-3
  v4Rule('224.0.0.0/4', 'multicast'),
  v4Rule('240.0.0.0/4', 'reserved'), // class E, includes the broadcast 255.255.255.255
];

/**
 * Native IPv6 ranges. The transition prefixes that embed an IPv4 address are not listed here;
 * `embeddedV4` below extracts the IPv4 address and judges that instead.
 */
const V6_RULES: Rule[] = [
  v6Rule('::/128', 'unspecified'),
  v6Rule('::1/128', 'loopback'),
  v6Rule('fd00:ec2::254/128', 'metadata'), // AWS IMDS over IPv6
  v6Rule('fc00::/7', 'private'), // unique local addresses
  v6Rule('fe80::/10', 'link-local'),
  v6Rule('fec0::/10', 'private'), // deprecated site-local, still routed inside some networks
  v6Rule('ff00::/8', 'multicast'),
  v6Rule('100::/64', 'reserved'), // discard-only
  v6Rule('2001:db8::/32', 'reserved'), // documentation
  v6Rule('64:ff9b:1::/48', 'reserved'), // local-use NAT64 (RFC 8215): translates into a private network
];

/**
 * The reason `ip` is forbidden, or `null` when the gateway may connect to it. Anything that is
 * not a plain IPv4 or IPv6 literal (a host name, `127.1`, an empty string) answers 'invalid':
 * this function only judges addresses, and an unknown input must never pass as allowed.
 * An IPv6 zone (`fe80::1%eth0`) is ignored; brackets (`[::1]`) are accepted.
 */
export function classifyAddress(ip: string): AddressCategory | null {
  let text = typeof ip === 'string' ? ip.trim() : '';
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);

  const family = isIP(text);
  if (family === 4) return classifyV4(parseV4(text)!);
  if (family === 6) return classifyV6(parseV6(text)!);
  return 'invalid';
}

/** True when the gateway must not connect to `ip` (see `classifyAddress`). */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== null;
}

function classifyV4(bytes: number[]): AddressCategory | null {
  return V4_RULES.find((rule) => matches(bytes, rule))?.category ?? null;
}

function classifyV6(bytes: number[]): AddressCategory | null {
  const native = V6_RULES.find((rule) => matches(bytes, rule));
  if (native) return native.category;
  const inner = embeddedV4(bytes);
  // An IPv6 form that reaches an IPv4 host is as good (or as bad) as that host.
  return inner ? classifyV4(inner) : null;
}

/**
 * The IPv4 address an IPv6 address would end up talking to, for the forms that carry one.
 * Returning the address (not a verdict) lets the IPv4 table stay the single source of truth.
 */
function embeddedV4(b: number[]): number[] | null {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (IPv4-mapped): the kernel connects to the IPv4 address on a dual-stack socket.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16);
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT).
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return b.slice(12, 16);
  // ::a.b.c.d (IPv4-compatible, deprecated but still parsed everywhere). :: and ::1 matched above.
  if (zeros(0, 12)) return b.slice(12, 16);
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix): the NAT64 gateway forwards to the IPv4 address.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.slice(12, 16);
  // 2002:AABB:CCDD::/48 (6to4): the relay forwards to AA.BB.CC.DD.
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6);
  // 2001:0000::/32 (Teredo): the client's IPv4 address is stored inverted in the last 32 bits.
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return b.slice(12, 16).map((x) => x ^ 0xff);
  return null;
}

function matches(bytes: number[], rule: Rule): boolean {
  if (bytes.length !== rule.bytes.length) return false;
  let left = rule.prefix;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((bytes[i] & mask) !== (rule.bytes[i] & mask)) return false;
  }
  return true;
}

/** Four bytes of a dotted-quad already validated by `isIP` (strict: no octal, no short forms). */
function parseV4(text: string): number[] | null {
  if (isIP(text) !== 4) return null;
  return text.split('.').map(Number);
}

/** Sixteen bytes of an IPv6 literal already validated by `isIP`, including `::` and a trailing dotted quad. */
function parseV6(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let body = text;
  const tail: number[] = [];
  const lastColon = body.lastIndexOf(':');
  if (body.includes('.', lastColon)) {
    tail.push(...parseV4(body.slice(lastColon + 1))!);
    body = body.slice(0, lastColon + 1) + '0:0'; // placeholder groups, replaced below
  }
  const [head, rest] = body.includes('::') ? body.split('::') : [body, null];
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groupsOf(head);
  const back = rest === null ? [] : groupsOf(rest);
  const groups = [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}
