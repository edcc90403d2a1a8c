import { clientAddress, trustedProxies } from '../../../src/infra/http/client-address';

const proxies = trustedProxies(['10.0.0.0/8', '172.16.0.1', 'fd00::/8'])!;

test('without trusted proxies, or from a peer that is not one, the peer is the client whatever the header says', () => {
  expect(clientAddress('203.0.113.9', '198.51.100.1', null)).toBe('203.0.113.9');
  expect(clientAddress('203.0.113.9', '198.51.100.1', proxies)).toBe('203.0.113.9');
  expect(clientAddress('10.1.2.3', undefined, proxies)).toBe('10.1.2.3');
});

test.each([
  ['one proxy appended the client', '198.51.100.1', '198.51.100.1'],
  ['what the client wrote before it is not believed', '1.1.1.1, 198.51.100.1', '198.51.100.1'],
  ['trusted hops are walked past from the right', '198.51.100.1, 10.9.9.9, 172.16.0.1', '198.51.100.1'],
  ['repeated headers are one list', ['198.51.100.1', '10.9.9.9'], '198.51.100.1'],
  ['IPv6', '2001:db8::7, fd00::1', '2001:db8::7'],
  ['garbage ends the walk at the last address read', 'junk, 10.9.9.9', '10.9.9.9'],
  ['an empty header leaves the peer', ' , ', '10.0.0.2'],
])('from a trusted proxy: %s', (_name, header, client) => {
  expect(clientAddress('10.0.0.2', header, proxies)).toBe(client);
});

test('TRUSTED_PROXIES entries must be addresses or CIDR ranges', () => {
  expect(trustedProxies([])).toBeNull();
  for (const bad of ['10.0.0.0/33', 'fd00::/129', 'proxy.local', '10.0.0.0/8/1', '10.0.0.0/x'])
    expect(() => trustedProxies([bad])).toThrow(/not an IP address or CIDR range/);
});
