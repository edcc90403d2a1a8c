import { assertStorableText } from '../../src/domain/shared/validate';
import { DomainError } from '../../src/domain/errors/domain-error';

/** The param a refusal names, or null when the input passes. */
function refusedAt(input: unknown): string | null | undefined {
  try {
    assertStorableText(input);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).type).toBe('invalid_request_error');
    return (err as DomainError).param ?? null;
  }
}

describe('assertStorableText (every request body passes it)', () => {
  it('passes clean text at every depth, and values that are not text', () => {
    expect(refusedAt({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'héllo 😀' }] }], n: 2, stream: true, x: null })).toBeUndefined();
    expect(refusedAt(['a', ['b', { c: 'd' }]])).toBeUndefined();
    expect(refusedAt(Object.assign(Object.create(null), { a: 'b' }))).toBeUndefined();
  });

  it('names where a NUL or a lone surrogate is, in values and in arrays', () => {
    expect(
      refusedAt({
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'user', content: [{ type: 'text', text: 'a\u0000b' }] },
        ],
      }),
    ).toBe('messages[1].content[0].text');
    expect(refusedAt({ prompt: 'x\uD800' })).toBe('prompt');
    expect(refusedAt({ prompt: '\uDC00y' })).toBe('prompt');
    expect(refusedAt('\u0000')).toBeNull();
    // A pair is one character, not a lone half.
    expect(refusedAt({ prompt: '\uD83D\uDE00' })).toBeUndefined();
  });

  it('refuses field names the database cannot store, and __proto__ as an own key', () => {
    expect(refusedAt({ metadata: { 'a\u0000': 'v' } })).toBe('metadata');
    expect(refusedAt(JSON.parse('{"metadata":{"__proto__":{"x":1}}}'))).toBe('metadata.__proto__');
  });

  it('stops at its depth bound (the schemas bound nesting themselves)', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 70; i++) deep = { d: deep };
    expect(refusedAt(deep)).toBeUndefined();
    let shallow: unknown = 'a\u0000';
    for (let i = 0; i < 10; i++) shallow = [shallow];
    expect(refusedAt(shallow)).toBe('[0][0][0][0][0][0][0][0][0][0]');
  });
});
