import { BlockList, isIP } from 'node:net';

/**
 * The address of the client behind a connection. Behind a load balancer every connection comes
 * from the balancer, so a per-client limit keyed on the peer would limit the balancer as a
 * whole; when the peer is a trusted proxy (TRUSTED_PROXIES), the client is read from
 * X-Forwarded-For instead: walking it from the right (the entry the nearest proxy appended),
 * past every trusted proxy, to the first address that is not one. A client can prepend anything
 * to that header, but cannot append past the proxies, so only the entries they wrote are used.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: BlockList | null): string | undefined {
  if (!peer || !trusted || !isTrusted(trusted, peer) || !forwardedFor) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    // Something that is not an address ends the walk: nothing left of it can be believed.
    if (!isIP(hop)) break;
    client = hop;
    if (!isTrusted(trusted, hop)) break;
  }
  return client;
}

/** `10.0.0.0/8`, `172.16.0.0/12`, `fd00::/8`, or a single address; throws on anything else. */
export function trustedProxies(ranges: readonly string[]): BlockList | null {
  if (ranges.length === 0) return null;
  const list = new BlockList();
  for (const range of ranges) {
    const [net, bits, extra] = range.split('/');
    const family = isIP(net ?? '');
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`'${range}' is not an IP address or CIDR range`);
    }
    list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
