/**
 * A cheap, deterministic token estimate. It is not any vendor's BPE: it only has to be stable,
 * fast (it runs on every chat request, for the quote and for the simulator's usage) and
 * roughly the size of a real tokenizer's count (about 4 characters of a word per token).
 *
 * The rules, in order, at each position of the text:
 *  - a single space directly before a non-space character joins the next piece (" hello"),
 *    as GPT tokenizers do, so ordinary prose costs no extra pieces for its spaces;
 *  - any other run of whitespace is its own pieces, at most 8 characters each (so padding a
 *    prompt with whitespace is not free);
 *  - a run of word characters (ASCII letters, digits, `_`, and letters below U+3000 such as
 *    Latin-with-accents, Greek or Cyrillic) is one piece when it has at most 6 characters
 *    (common words are one token in real vocabularies), else pieces of 4 characters;
 *  - anything else (punctuation, symbols, CJK, emoji) is one piece per code point; a surrogate
 *    pair is never split, so a streamed piece is always valid UTF-16.
 *
 * Every piece depends only on the text before its end, so the first k pieces of a text,
 * joined, tokenize back into exactly those k pieces. The simulator relies on that: a reply cut
 * at maxTokens, or a stream aborted after k pieces, counts as exactly that many tokens.
 */

const OTHER = 0;
const WORD = 1;
const SPACE = 2;

/** Longest whitespace piece, in UTF-16 code units. */
const MAX_SPACE_PIECE = 8;
/** Words up to this length are one piece; longer ones are cut every WORD_PIECE characters. */
const SHORT_WORD = 6;
const WORD_PIECE = 4;

/** Class of every UTF-16 code unit, computed once: the scan then costs one array read a char. */
const CHAR_CLASS: Uint8Array = buildCharClassTable();

function buildCharClassTable(): Uint8Array {
  const table = new Uint8Array(0x10000).fill(OTHER);
  for (let c = 0x30; c <= 0x39; c++) table[c] = WORD;
  for (let c = 0x41; c <= 0x5a; c++) table[c] = WORD;
  for (let c = 0x61; c <= 0x7a; c++) table[c] = WORD;
  table[0x5f] = WORD;
  // Alphabetic scripts up to CJK count like ASCII letters; the General Punctuation block does not.
  for (let c = 0xc0; c < 0x3000; c++) {
    if (c !== 0xd7 && c !== 0xf7 && (c < 0x2000 || c > 0x2bff)) table[c] = WORD;
  }
  const spaces = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];
  for (const c of spaces) table[c] = SPACE;
  for (let c = 0x2000; c <= 0x200a; c++) table[c] = SPACE;
  return table;
}

type PieceSink = (start: number, end: number) => void;

/**
 * The one tokenizer. With no sink it only counts (no allocation); with a sink it also reports
 * each piece's [start, end), so counting and splitting can never disagree.
 */
function scan(text: string, sink?: PieceSink): number {
  const n = text.length;
  let count = 0;
  let i = 0;
  while (i < n) {
    const pieceStart = i;
    let c = text.charCodeAt(i);
    let cls = CHAR_CLASS[c];

    if (cls === SPACE) {
      const next = i + 1 < n ? CHAR_CLASS[text.charCodeAt(i + 1)] : SPACE;
      if (c === 0x20 && next !== SPACE) {
        // A lone space leading a word or symbol: it belongs to that piece.
        i += 1;
        c = text.charCodeAt(i);
        cls = next;
      } else {
        let runEnd = i + 1;
        while (runEnd < n && CHAR_CLASS[text.charCodeAt(runEnd)] === SPACE) runEnd++;
        // The run's last space leads the following piece, when there is one.
        const end = runEnd < n && text.charCodeAt(runEnd - 1) === 0x20 ? runEnd - 1 : runEnd;
        if (sink === undefined) {
          count += Math.ceil((end - i) / MAX_SPACE_PIECE);
        } else {
          for (let s = i; s < end; s += MAX_SPACE_PIECE) {
            sink(s, Math.min(s + MAX_SPACE_PIECE, end));
            count++;
          }
        }
        i = end;
        continue;
      }
    }

    if (cls === WORD) {
      let runEnd = i + 1;
      while (runEnd < n && CHAR_CLASS[text.charCodeAt(runEnd)] === WORD) runEnd++;
      // Stays prefix-stable: a cut after k>=2 chunks leaves a word longer than SHORT_WORD,
      // and a cut after 1 chunk leaves a 4-character word, one piece either way.
      const length = runEnd - i;
      if (length <= SHORT_WORD) {
        if (sink !== undefined) sink(pieceStart, runEnd);
        count++;
      } else if (sink === undefined) {
        count += Math.ceil(length / WORD_PIECE);
      } else {
        let s = pieceStart;
        let e = Math.min(i + WORD_PIECE, runEnd);
        for (;;) {
          sink(s, e);
          count++;
          if (e >= runEnd) break;
          s = e;
          e = Math.min(e + WORD_PIECE, runEnd);
        }
      }
      i = runEnd;
      continue;
    }

    // One code point; keep a surrogate pair together.
    let end = i + 1;
    if (c >= 0xd800 && c <= 0xdbff && end < n) {
      const low = text.charCodeAt(end);
      if (low >= 0xdc00 && low <= 0xdfff) end++;
    }
    if (sink !== undefined) sink(pieceStart, end);
    count++;
    i = end;
  }
  return count;
}

/** Estimated number of tokens in `text` (0 for the empty string). */
export function countTokens(text: string): number {
  return scan(text);
}

/**
 * The pieces that countTokens counts, in order. They join back to exactly `text`, and there
 * are exactly countTokens(text) of them.
 */
export function splitIntoTokens(text: string): string[] {
  const pieces: string[] = [];
  scan(text, (start, end) => {
    pieces.push(text.slice(start, end));
  });
  return pieces;
}

/** Framing cost of one message (role and separators), as in OpenAI's published estimate. */
const TOKENS_PER_MESSAGE = 4;
/** A `name` replaces the role token in OpenAI's format, roughly one more token. */
const TOKENS_PER_NAME = 1;
/** Every reply is primed with the assistant's role header. */
const TOKENS_REPLY_PRIMING = 3;

/** Estimated prompt tokens of a chat request: content plus a fixed overhead per message. */
export function countPromptTokens(messages: readonly { role: string; content: string; name?: string }[]): number {
  let total = TOKENS_REPLY_PRIMING;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + scan(message.content);
    if (message.name) total += TOKENS_PER_NAME + scan(message.name);
  }
  return total;
}
