/**
 * Which IP addresses the gateway must never talk to on a caller's behalf.
 *
 * Every URL a caller hands in (source media, webhooks) makes this server open a connection, so
 * a caller could aim it at the machine itself, the private network behind it or the cloud
 * metadata service (SSRF). This module is the single table of forbidden ranges; the
 * acceptance-time check (url-check.ts) and the outbound client (safe-http-client.ts) both ask it.
 *
 * The ranges are matched by `net.BlockList`, which parses every spelling of an address
 * (`::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:0001`, upper case) and matches an IPv4-mapped IPv6
 * address (`::ffff:127.0.0.1`) against the IPv4 ranges by itself. The other IPv6 forms that carry
 * an IPv4 address (compatible, translated, NAT64, 6to4) are prefixes too, so each IPv4 range is
 * also added under each of those prefixes: they are judged by the IPv4 address they would reach.
 * Teredo is the one form BlockList cannot express (see `teredoClient`).
 */
import { BlockList, isIP } from 'node:net';
import { ipv6Groups } from './ipv6-groups';

/** Why an address is forbidden; `null` from `classifyAddress` means it is allowed. */
export type AddressCategory = 'invalid' | 'unspecified' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'shared' | 'multicast' | 'reserved';

type Table = Array<[AddressCategory, string[]]>;

/**
 * IPv4 ranges, the more specific category first (the first match names the reason). Besides the
 * obvious loopback/private/link-local ranges this includes everything IANA marks as not globally
 * reachable: a public media host never lives there, so refusing costs nothing and closes odd
 * corners (e.g. 192.0.0.192 is Oracle Cloud's metadata address, 100.100.100.200 Alibaba's).
 */
const V4: Table = [
  ['metadata', ['169.254.169.254/32']], // AWS, GCP, Azure, DigitalOcean, OpenStack
  ['unspecified', ['0.0.0.0/8']], // "this network"; 0.0.0.0 connects to the local host on Linux
  ['loopback', ['127.0.0.0/8']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['shared', ['100.64.0.0/10']], // carrier-grade NAT; also Alibaba's metadata service
  ['link-local', ['169.254.0.0/16']],
  [
    'reserved',
    [
      '192.0.0.0/24', // IETF protocol assignments (incl. Oracle metadata 192.0.0.192)
      '192.0.2.0/24', // TEST-NET-1
      '192.88.99.0/24', // deprecated 6to4 relay anycast
      '198.18.0.0/15', // benchmarking
      '198.51.100.0/24', // TEST-NET-2
      '203.0.113.0/24', // TEST-NET-3
      '240.0.0.0/4', // class E, includes the broadcast 255.255.255.255
    ],
  ],
  ['multicast', ['224.0.0.0/4']],
];

/**
 * Native IPv6 ranges, judged before any embedded IPv4 address: `::1` is loopback, although as an
 * IPv4-compatible address it would read 0.0.0.1.
 */
const V6: Table = [
  ['metadata', ['fd00:ec2::254/128']], // AWS IMDS over IPv6
  ['unspecified', ['::/128']],
  ['loopback', ['::1/128']],
  [
    'private',
    [
      'fc00::/7', // unique local addresses
      'fec0::/10', // deprecated site-local, still routed inside some networks
    ],
  ],
  ['link-local', ['fe80::/10']],
  ['multicast', ['ff00::/8']],
  [
    'reserved',
    [
      '100::/64', // discard-only
      '2001:db8::/32', // documentation
      '64:ff9b:1::/48', // local-use NAT64 (RFC 8215): translates into a private network
    ],
  ],
];

/**
 * IPv6 prefixes followed by an IPv4 address that the traffic ends up at. (IPv4-mapped
 * `::ffff:a.b.c.d` is missing on purpose: BlockList already matches it against IPv4 rules.)
 */
const EMBEDDINGS: Array<(v4: number[], prefix: number) => [string, number]> = [
  // ::a.b.c.d (IPv4-compatible, deprecated but still parsed everywhere). :: and ::1 are judged as V6 first.
  (v4, p) => [`::${v4.join('.')}`, 96 + p],
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT).
  (v4, p) => [`::ffff:0:${v4.join('.')}`, 96 + p],
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix): the NAT64 gateway forwards to the IPv4 address.
  (v4, p) => [`64:ff9b::${v4.join('.')}`, 96 + p],
  // 2002:AABB:CCDD::/48 (6to4): the relay forwards to AA.BB.CC.DD.
  (v4, p) => [`2002:${hex16(v4[0], v4[1])}:${hex16(v4[2], v4[3])}::`, 16 + p],
];

const TEREDO = new BlockList();
TEREDO.addSubnet('2001::', 32, 'ipv6');

function compile(table: Table, embed: boolean): Array<[AddressCategory, BlockList]> {
  return table.map(([category, ranges]) => {
    const list = new BlockList();
    for (const range of ranges) {
      const [net, bits] = range.split('/') as [string, string];
      const prefix = Number(bits);
      if (isIP(net) === 6) {
        list.addSubnet(net, prefix, 'ipv6');
        continue;
      }
      list.addSubnet(net, prefix, 'ipv4');
      if (embed) for (const form of EMBEDDINGS) list.addSubnet(...form(net.split('.').map(Number), prefix), 'ipv6');
    }
    return [category, list];
  });
}

const NATIVE_V6 = compile(V6, false);
const BY_V4 = compile(V4, true);

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
  if (family === 4) return firstMatch(BY_V4, text, 'ipv4');
  if (family !== 6) return 'invalid';
  const native = firstMatch(NATIVE_V6, text, 'ipv6') ?? firstMatch(BY_V4, text, 'ipv6');
  if (native) return native;
  const teredo = TEREDO.check(text, 'ipv6') ? teredoClient(text) : null;
  return teredo ? firstMatch(BY_V4, teredo, 'ipv4') : null;
}

/** True when the gateway must not connect to `ip` (see `classifyAddress`). */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== null;
}

function firstMatch(lists: Array<[AddressCategory, BlockList]>, ip: string, family: 'ipv4' | 'ipv6'): AddressCategory | null {
  for (const [category, list] of lists) if (list.check(ip, family)) return category;
  return null;
}

/**
 * 2001:0000::/32 (Teredo) stores the client's IPv4 address inverted in the last 32 bits, after 64
 * bits of server address, flags and port. A BlockList rule is a prefix and cannot skip those
 * 64 bits (nor invert), so this one form is still read by hand.
 */
function teredoClient(ip: string): string | null {
  const groups = ipv6Groups(ip);
  if (!groups) return null;
  const [hi, lo] = groups.slice(6).map((g) => parseInt(g, 16) ^ 0xffff) as [number, number];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

function hex16(hi: number, lo: number): string {
  return ((hi << 8) | lo).toString(16);
}
