/**
 * The simulator's reply text: a short, readable sentence derived from the conversation, so a
 * developer on a test key can see their prompt was received, and a test can predict nothing
 * beyond "same request, same reply". The simulator serves live keys too (every model of the
 * built-in catalog), so nothing here may say what only holds for one mode: a live key's call is
 * charged, a test key's is not.
 */
import type { ChatMessage } from '../ports';
import { textOfContent } from '../../domain/chat/chat-port';
import { fnv1a, fnv1aNumber, createPrng } from './seed';

const OPENERS = ['Sure.', 'Certainly.', 'Happy to help.', 'Good question.', 'Here is a thought.', 'Understood.'];

const SENTENCES = [
  'This reply comes from the built-in simulator, so it is the same every time you ask.',
  'A live model would give a real answer here; the simulator only echoes the shape of one.',
  'Try changing the seed to get a different, equally reproducible reply.',
  'The simulator counts its tokens honestly, so the usage you see is what a live call would report.',
  'Streaming works too: the same text arrives in several small pieces.',
  'The usage below is what this call is billed at; on a test key the balance never moves.',
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
    hash = fnv1a(textOfContent(message.content), fnv1a('\u0002', hash));
    if (message.name) hash = fnv1a(message.name, fnv1a('\u0003', hash));
    for (const call of message.tool_calls ?? []) hash = fnv1a(call.function.arguments, fnv1a(call.function.name, hash));
    if (message.tool_call_id) hash = fnv1a(message.tool_call_id, fnv1a('\u0004', hash));
  }
  return seed === undefined ? hash : fnv1aNumber(seed, hash);
}

/** A short, single-line excerpt of a text. */
export function excerpt(source: string, maxChars = MAX_ECHO_CHARS): string {
  // Slice before normalising, so a huge prompt costs no more than a short one.
  let echo = source
    .slice(0, maxChars * 2)
    .replace(WHITESPACE_RUN, ' ')
    .trim();
  if (echo.length > maxChars) echo = `${echo.slice(0, maxChars).trimEnd()}...`;
  return echo;
}

/** The last user message, or else the last message: what the reply is about. */
export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') return textOfContent(messages[i].content);
  }
  return messages.length > 0 ? textOfContent(messages[messages.length - 1].content) : '';
}

function imagesIn(message: ChatMessage | undefined): number {
  return Array.isArray(message?.content) ? message.content.filter((p) => p.type === 'image_url').length : 0;
}

/** What the reply says it read: the tool results of the last turn, else the user's words. */
function aboutOf(messages: readonly ChatMessage[]): string {
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) results.unshift(excerpt(textOfContent(messages[i].content)));
  if (results.length > 0) return `The tool returned: ${results.map((r) => `"${r}"`).join(', ')}.`;
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const images = imagesIn(lastUser);
  const seen = images === 0 ? '' : ` I was shown ${images} image${images === 1 ? '' : 's'}.`;
  const echo = excerpt(lastUserText(messages));
  return (echo === '' ? 'You sent an empty message.' : `You wrote: "${echo}".`) + seen;
}

/** The full, untruncated reply for a conversation. */
export function composeReply(upstreamModel: string, messages: readonly ChatMessage[], seed: number | undefined): string {
  const prng = createPrng([conversationHash(upstreamModel, messages, seed)]);
  const opener = OPENERS[prng.int(OPENERS.length)];
  const first = prng.int(SENTENCES.length);
  const second = (first + 1 + prng.int(SENTENCES.length - 1)) % SENTENCES.length;
  return `${opener} ${aboutOf(messages)} ${SENTENCES[first]} ${SENTENCES[second]}`;
}
