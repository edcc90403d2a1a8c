/**
 * How deeply a GraphQL document's brackets nest (`{` selection sets and object literals, `[`
 * list literals and types, `(` arguments and variable definitions), read from the text before
 * it is parsed. graphql-js parses by recursive descent: the token bound still lets a literal
 * such as `[[[…1…]]]` nest ~1,500 deep, which on a cold process overflows the stack and would
 * send the RangeError to the client as the parse error. Brackets inside strings, block strings
 * and comments do not count. One pass over the characters, stopping at the first level past
 * `max`; a document that is not well formed is left to the parser to report.
 */

const LEFT_BRACE = 0x7b;
const RIGHT_BRACE = 0x7d;
const LEFT_BRACKET = 0x5b;
const RIGHT_BRACKET = 0x5d;
const LEFT_PAREN = 0x28;
const RIGHT_PAREN = 0x29;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const LF = 0x0a;
const CR = 0x0d;

/** True when some bracket in `text` opens more than `max` levels deep. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === LEFT_BRACE || c === LEFT_BRACKET || c === LEFT_PAREN) {
      if (++depth > max) return true;
      i++;
    } else if (c === RIGHT_BRACE || c === RIGHT_BRACKET || c === RIGHT_PAREN) {
      if (depth > 0) depth--;
      i++;
    } else if (c === HASH) {
      i = lineEnd(text, i);
    } else if (c === QUOTE) {
      i = text.startsWith('"""', i) ? blockStringEnd(text, i + 3) : stringEnd(text, i + 1);
    } else i++;
  }
  return false;
}

/** The index of the line break that ends a comment (or the end of the text). */
function lineEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === LF || c === CR) return i;
    i++;
  }
  return i;
}

/** Past the closing quote of a string whose body starts at `i`; a line break ends an unterminated one. */
function stringEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i += 2;
    else if (c === QUOTE) return i + 1;
    else if (c === LF || c === CR) return i;
    else i++;
  }
  return i;
}

/** Past the closing `"""` of a block string whose body starts at `i` (`\"""` is an escaped quote). */
function blockStringEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH && text.startsWith('"""', i + 1)) i += 4;
    else if (c === QUOTE && text.startsWith('"""', i)) return i + 3;
    else i++;
  }
  return i;
}
