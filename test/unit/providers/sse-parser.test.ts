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

  it('at the end of the stream, an event whose lines ended counts without its blank line; one cut inside a line does not', () => {
    for (const ending of ['\n', '\r\n', '\r']) {
      const parser = new SseDataParser();
      expect(parser.push(`data: first\n\ndata: whole${ending}`)).toEqual(['first']);
      expect(parser.end()).toEqual(['whole']);
    }
    const cut = new SseDataParser();
    expect(cut.push('data: whole\ndata: {"cut')).toEqual([]);
    expect(cut.end()).toEqual([]);
    const done = new SseDataParser();
    expect(done.push('data: [DONE]\n\n')).toEqual(['[DONE]']);
    expect(done.end()).toEqual([]);
  });

  it('reads empty and short lines the same whatever the chunk boundaries', () => {
    const stream = 'data:\n\ndata: \n\ndat\n\nd\n\ndata:x\n\ndata\n\n';
    for (const events of parseInPieces(stream)) expect(events).toEqual(['', '', 'x', '']);
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
    // And stays refused: more text, or the end of the stream, yields nothing from it.
    expect(() => parser.push('\n\ndata: later\n\n')).toThrow(expect.objectContaining({ type: 'upstream_error' }));
    expect(parser.end()).toEqual([]);
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
