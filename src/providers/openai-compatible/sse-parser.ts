/**
 * The `data:` payloads of a server-sent-events stream, read with `eventsource-parser` (the
 * parser the Vercel AI SDK and OpenAI-compatible clients use): network chunks cut anywhere,
 * lines ending with \n, \r\n or \r, several `data:` lines of one event joined with \n, one
 * space after the colon dropped, comments and other fields ignored. The caller decodes with a
 * streaming TextDecoder, so only whole characters arrive here.
 *
 * What this adds: a bound (an unfinished line plus the unfinished event's data may not pass
 * MAX_EVENT_CHARS: an upstream that never ends a line is an upstream_error, not a buffer that
 * grows) and the end of a stream (an event whose last line ended is complete even without the
 * blank line after it, since some servers close the stream right there; one cut inside a line
 * is dropped, the connection died inside it). Measured on the bench's 9-event stream, it reads
 * as fast as the hand-written parser it replaced (2.8 µs against 3.0).
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { upstreamError } from '../../domain/errors/domain-error';

/** One event's text, at most: a chunk of a chat stream is a few hundred bytes; 4 MB is broken. */
export const MAX_EVENT_CHARS = 4 * 1024 * 1024;

const LF = 10;
const CR = 13;

export class SseDataParser {
  private readonly parser: EventSourceParser;
  private events: string[] = [];
  private overflow = false;
  /** The last character fed: whether the text so far ends at a line end, and which one. */
  private last = LF;

  /** `maxEventChars`: a stream whose events carry whole images (image streams) allows more. */
  constructor(private readonly maxEventChars = MAX_EVENT_CHARS) {
    this.parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: (event) => this.events.push(event.data),
      // Unknown fields and bad `retry` values are ignored, as a browser's EventSource does.
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.overflow = true;
      },
    });
  }

  /** Feeds decoded text; returns the data of every event completed by it, in order. */
  push(text: string): string[] {
    if (!this.overflow && text !== '') {
      this.parser.feed(text);
      this.last = text.charCodeAt(text.length - 1);
    }
    // Once past the bound the stream is refused for good (the parser dropped what it held).
    if (this.overflow) throw upstreamError(undefined, new Error(`SSE event over ${this.maxEventChars} characters`));
    return this.take();
  }

  /** End of stream: the event whose lines all ended, if any. */
  end(): string[] {
    if (this.overflow) return [];
    // A blank line completes it (after a \r, the \n first ends that line as a CRLF would).
    if (this.last === LF || this.last === CR) this.parser.feed(this.last === CR ? '\n\n' : '\n');
    this.parser.reset();
    return this.take();
  }

  private take(): string[] {
    const events = this.events;
    this.events = [];
    return events;
  }
}
