/**
 * How many elements a JSON text holds, counted on its bytes before it is parsed.
 *
 * A chat body may be 25 MB (base64 media), and 25 MB of `"k1":1,"k2":1,…` is 1.7 million keys:
 * `JSON.parse` alone took 1.5 s of the event loop on it, and the walks after it (depth, text
 * checks, the schema's unknown-field check) as long again, before the body was refused for its
 * first unknown field. No request of this API needs anywhere near MAX_JSON_ELEMENTS (a long
 * agent conversation with its tool calls is a few thousand), so a body past it is refused
 * before the parse: every container and every element after a container's first (`[`, `{`,
 * `,` outside strings) counts one.
 *
 * Strings are skipped with `indexOf`, so a body that is mostly base64 costs what a native memchr
 * over it costs (about a millisecond for 25 MB), not a JavaScript loop over every byte.
 */
export const MAX_JSON_ELEMENTS = 100_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/** True when the JSON text in `bytes` holds more than `max` elements. Malformed text is left to the parser. */
export function jsonElementsExceed(bytes: Uint8Array, max = MAX_JSON_ELEMENTS): boolean {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let i = 0; i < buffer.length; i++) {
    const b = buffer[i];
    if (b === QUOTE) {
      i = closingQuote(buffer, i + 1);
      if (i < 0) return false;
    } else if (b === COMMA || b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++count > max) return true;
    }
  }
  return false;
}

/** Where the string opened before `from` ends (its closing quote), or -1 when it never does. */
function closingQuote(buffer: Buffer, from: number): number {
  for (let at = buffer.indexOf(QUOTE, from); at >= 0; at = buffer.indexOf(QUOTE, at + 1)) {
    // A quote is escaped when an odd number of backslashes stands right before it.
    let slashes = 0;
    while (buffer[at - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
  return -1;
}
