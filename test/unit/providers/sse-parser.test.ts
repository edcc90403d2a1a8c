import { SseDataParser } from '../../../src/providers/openai-compatible/sse-parser';

/** Feeds `text` cut at every possible pair of points, so no chunk boundary goes untested. */
function parseInPieces(text: string): string[][] {
  const results: string[][] = [];
  for (let a = 0; a <= text.length; a++) {
    for (let b = a; b <= text.length; b++) {
      const parser = new SseDataParser();
      results.push([...parser.push(text.slice(0, a)), ...parser.push(text.slice(a, b)), ...parser.push(text.slice(b)), ...parser.end()]);
    }
  }
  return results;
}

describe('SseDataParser', () => {
  it('returns the data of each event whatever the chunk boundaries', () => {
    const stream = 'data: {"a":1}\n\n: comment\n\nevent: x\ndata: {"b":2}\n\ndata: [DONE]\n\n';
    for (const events of parseInPieces(stream)) expect(events).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('understands \\r\\n and \\r line ends, even when \\r and \\n arrive apart', () => {
    const stream = 'data: one\r\n\r\ndata: two\r\rdata:three\n\n';
    for (const events of parseInPieces(stream)) expect(events).toEqual(['one', 'two', 'three']);
  });

  it('joins multi-line data with \\n and drops only one space after the colon', () => {
    const parser = new SseDataParser();
    expect(parser.push('data: a\ndata:  b\ndata\n\n')).toEqual(['a\n b\n']);
  });

  it('keeps complete data lines at end of stream but drops a half-received line', () => {
    const parser = new SseDataParser();
    expect(parser.push('data: whole\ndata: {"cut')).toEqual([]);
    expect(parser.end()).toEqual(['whole']);
  });

  it('ignores fields that only start with "data"', () => {
    expect(new SseDataParser().push('dataset: x\n\n')).toEqual([]);
  });
});

describe('bounds', () => {
  test('a line that never ends is refused as upstream_error once past the bound, not buffered forever', () => {
    const parser = new SseDataParser();
    const piece = 'x'.repeat(1024 * 1024);
    expect(() => {
      for (let i = 0; i < 5; i++) parser.push(i === 0 ? `data: ${piece}` : piece);
    }).toThrow(expect.objectContaining({ type: 'upstream_error' }));
  });

  test('an event of many data lines that never ends is refused the same way', () => {
    const parser = new SseDataParser();
    const line = `data: ${'y'.repeat(64 * 1024)}\n`;
    expect(() => {
      for (let i = 0; i < 80; i++) parser.push(line);
    }).toThrow(expect.objectContaining({ type: 'upstream_error' }));
  });

  test('ordinary events reset the count', () => {
    const parser = new SseDataParser();
    const event = `data: ${'z'.repeat(512 * 1024)}\n\n`;
    for (let i = 0; i < 20; i++) expect(parser.push(event)).toHaveLength(1);
  });
});
