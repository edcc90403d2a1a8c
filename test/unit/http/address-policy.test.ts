import { classifyAddress, isForbiddenAddress } from '../../../src/infra/http/address-policy';

describe('isForbiddenAddress', () => {
  const forbidden: Array<[string, string]> = [
    // IPv4
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.100.100.200', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    // IPv6 native
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'],
    // IPv4-mapped / compatible / translated
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    // NAT64 / 6to4 / Teredo embedding a forbidden IPv4
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::c0a8:101', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:c0a8:0101:1::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // Teredo, client 127.0.0.1 inverted
    ['2001::80ff:fffe', 'loopback'], // Teredo, compressed
    ['2001:0:0:0:0:0:5601:5601', 'metadata'], // Teredo, client 169.254.169.254 inverted
    ['2001::ffff:ffff', 'unspecified'], // Teredo, client 0.0.0.0
    ['2001:0:4136:e378:8000:63bf::', 'reserved'], // Teredo, client 255.255.255.255 (trailing ::)
    ['::169.254.169.254', 'metadata'],
    ['::FFFF:0:7F00:1', 'loopback'],
    ['64:FF9B::A9FE:A9FE', 'metadata'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['2002:6440:1::', 'shared'],
  ];

  it.each(forbidden)('%s is forbidden (%s)', (ip, category) => {
    expect(isForbiddenAddress(ip)).toBe(true);
    expect(classifyAddress(ip)).toBe(category);
  });

  const allowed = [
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '192.169.0.1',
    '11.0.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82a::200e',
    '::ffff:93.184.216.34',
    '::ffff:5db8:d822',
    '64:ff9b::8.8.8.8',
    '2002:5db8:d822::1',
    'fbff::1',
    'fe7f::1',
    '2001:0:4136:e378:8000:63bf:a247:27dd', // Teredo, client 93.184.216.34 inverted
    '::8.8.8.8',
    '::ffff:0:8.8.8.8',
    '2001:db9::1',
  ];

  it.each(allowed)('%s is allowed', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
    expect(classifyAddress(ip)).toBeNull();
  });

  // Not an address at all: fail closed rather than let a name or an odd spelling through.
  it.each(['', 'localhost', 'example.com', '127.1', '2130706433', '0x7f.0.0.1', '1.2.3.4.5', ':::1', '[::1'])(
    '%j is not an address and answers forbidden',
    (input) => {
      expect(isForbiddenAddress(input)).toBe(true);
      expect(classifyAddress(input)).toBe('invalid');
    },
  );

  it('does not throw on a non-string', () => {
    expect(isForbiddenAddress(undefined as unknown as string)).toBe(true);
  });
});
