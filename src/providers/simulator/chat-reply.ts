/**
 * The simulator's reply text: a short, readable sentence derived from the conversation, so a
 * developer on a test key can see their prompt was received, and a test can predict nothing
 * beyond "same request, same reply".
 */
import type { ChatMessage } from '../ports';
import { fnv1a, fnv1aNumber, createPrng } from './seed';

const OPENERS = ['Sure.', 'Certainly.', 'Happy to help.', 'Good question.', 'Here is a thought.', 'Understood.'];

const SENTENCES = [
  'This reply comes from the built-in simulator, so it is the same every time you ask.',
  'A live model would give a real answer here; the simulator only echoes the shape of one.',
  'Try changing the seed to get a different, equally reproducible reply.',
  'The simulator counts its tokens honestly, so the usage you see is what a live call would report.',
  'Streaming works too: the same text arrives in several small pieces.',
  'Nothing was charged for this answer, but the quote shows what a live call would cost.',
  'The words are picked from a short list by a hash of your messages.',
  'Ask again with the same messages and you will read exactly this.',
];

/** Longest echo of the user's words, in characters, so replies stay short whatever the prompt. */
const MAX_ECHO_CHARS = 80;
/** Collapses newlines and runs of spaces in the echo (compiled once, not per call). */
const WHITESPACE_RUN = /\s+/g;

/** Hash of everything that should change the reply: model, every message, and the seed. */
export function conversationHash(upstreamModel: string, messages: readonly ChatMessage[], seed: number | undefined): number {
  let hash = fnv1a(upstreamModel);
  for (const message of messages) {
    hash = fnv1a(message.role, fnv1a('\u0001', hash));
    hash = fnv1a(message.content, fnv1a('\u0002', hash));
    if (message.name) hash = fnv1a(message.name, fnv1a('\u0003', hash));
  }
  return seed === undefined ? hash : fnv1aNumber(seed, hash);
}

function echoOf(messages: readonly ChatMessage[]): string {
  let source = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      source = messages[i].content;
      break;
    }
  }
  if (source === '' && messages.length > 0) source = messages[messages.length - 1].content;
  // Slice before normalising, so a huge prompt costs no more than a short one.
  let echo = source.slice(0, MAX_ECHO_CHARS * 2).replace(WHITESPACE_RUN, ' ').trim();
  if (echo.length > MAX_ECHO_CHARS) echo = `${echo.slice(0, MAX_ECHO_CHARS).trimEnd()}...`;
  return echo;
}

/** The full, untruncated reply for a conversation. */
export function composeReply(upstreamModel: string, messages: readonly ChatMessage[], seed: number | undefined): string {
  const prng = createPrng([conversationHash(upstreamModel, messages, seed)]);
  const opener = OPENERS[prng.int(OPENERS.length)];
  const first = prng.int(SENTENCES.length);
  const second = (first + 1 + prng.int(SENTENCES.length - 1)) % SENTENCES.length;
  const echo = echoOf(messages);
  const about = echo === '' ? 'You sent an empty message.' : `You wrote: "${echo}".`;
  return `${opener} ${about} ${SENTENCES[first]} ${SENTENCES[second]}`;
}
