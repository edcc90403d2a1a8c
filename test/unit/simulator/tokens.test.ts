import { countPromptTokens, countTokens, splitIntoTokens } from '../../../src/domain/chat/tokens';

const samples = [
  '',
  ' ',
  'hello',
  'Hello, world!',
  'The quick brown fox jumps over the lazy dog.',
  '  leading and trailing  ',
  'line one\nline two\n\n\tindented',
  'supercalifragilisticexpialidocious',
  'a' + ' '.repeat(30) + 'b',
  '\n'.repeat(20),
  'café naïve Straße Ωμέγα привет',
  '日本語のテキスト',
  'emoji 😀👍🏽 and flags 🇫🇷',
  'lone surrogate \ud800 here',
  'price: $12.50 (approx.) -- see https://example.com/a?b=c#d',
  'snake_case_identifier andCamelCase 12345678901',
];

describe('tokens', () => {
  it('counts the empty string as 0', () => {
    expect(countTokens('')).toBe(0);
    expect(splitIntoTokens('')).toEqual([]);
  });

  it.each(samples)('pieces of %j join back to the text and their count matches', (text) => {
    const pieces = splitIntoTokens(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBe(countTokens(text));
    expect(pieces.every((piece) => piece.length > 0)).toBe(true);
  });

  it.each(samples)('every prefix of whole pieces of %j re-tokenizes to itself', (text) => {
    const pieces = splitIntoTokens(text);
    for (let k = 0; k <= pieces.length; k++) {
      const prefix = pieces.slice(0, k).join('');
      expect(splitIntoTokens(prefix)).toEqual(pieces.slice(0, k));
    }
  });

  it('never splits a surrogate pair', () => {
    for (const piece of splitIntoTokens('😀😀 x😀y')) {
      const last = piece.charCodeAt(piece.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
  });

  it('gives plausible sizes', () => {
    expect(countTokens('hello')).toBe(1);
    expect(countTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('internationalization')).toBe(5); // 20 characters, pieces of 4
    expect(countTokens(' '.repeat(100))).toBe(13);
  });

  it('adds a fixed overhead per message', () => {
    expect(countPromptTokens([])).toBe(3);
    expect(countPromptTokens([{ role: 'user', content: 'hi' }])).toBe(3 + 4 + 1);
    expect(countPromptTokens([{ role: 'user', content: 'hi', name: 'bob' }])).toBe(3 + 4 + 1 + 1 + 1);
    expect(
      countPromptTokens([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello, world!' },
      ]),
    ).toBe(3 + 4 + 3 + 4 + 4);
  });

  // Its speed is a benchmark's to measure, not a test's to time (a timed bound here failed CI on a slow VM).
  it('counts a large prompt', () => {
    const text = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(20000); // ~1.1 MB
    expect(countTokens(text)).toBeGreaterThan(200000);
  });
});
