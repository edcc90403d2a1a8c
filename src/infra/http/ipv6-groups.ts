/**
 * The eight 16-bit groups of an IPv6 literal, as lower-case hex without leading zeros, or null
 * when it is not one. WHATWG URL does the parsing (every spelling, a trailing dotted quad, upper
 * case) and prints the canonical form; only its `::` is expanded here.
 */
export function ipv6Groups(ip: string): string[] | null {
  let canonical: string;
  try {
    canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  if (!canonical.includes('::')) return canonical.split(':');
  const [head, tail] = canonical.split('::') as [string, string];
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  return [...front, ...new Array<string>(8 - front.length - back.length).fill('0'), ...back];
}
