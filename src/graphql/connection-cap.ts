import { isIP } from 'node:net';
import { ipv6Groups } from '../infra/http/ipv6-groups';
import { KeyedCounts } from '../domain/shared/keyed-counts';

/**
 * How many WebSocket connections one client address may hold open at once on this instance.
 * Counted from the upgrade request (a socket still in its handshake holds a place) to the close
 * of its TCP socket. IPv4 is counted per address (an IPv4-mapped IPv6 peer is its IPv4 address);
 * IPv6 per /64, because one host is routinely given a whole /64 and could otherwise open every
 * connection from an address of its own.
 */
export class ConnectionCap {
  private readonly open = new KeyedCounts();

  /** `perAddress` 0: no cap. */
  constructor(readonly perAddress: number) {}

  /** Takes a place for `address`; answers its release (once is enough, more is harmless), or null at the cap. */
  acquire(address: string | undefined): (() => void) | null {
    const key = clientKey(address);
    if (key === null) return null;
    if (this.perAddress > 0 && this.open.get(key) >= this.perAddress) return null;
    return this.open.hold(key);
  }

  /** Connections `address` holds now. */
  count(address: string): number {
    const key = clientKey(address);
    return key === null ? 0 : this.open.get(key);
  }
}

/** The counting key of a peer address, or null when there is none (the socket already went). */
export function clientKey(address: string | undefined): string | null {
  if (!address) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return address;
  const groups = ipv6Groups(bare);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
}
