/**
 * Incremental parser for the `data:` payloads of a server-sent-events stream. Network chunks
 * cut anywhere: inside a line, between `\r` and `\n`, inside a multi-byte UTF-8 character (the
 * caller decodes with a streaming TextDecoder, so only whole characters reach us). We keep the
 * unfinished line and the unfinished event between calls and hand back whole events only.
 *
 * Follows the SSE rules that matter here: lines end with \n, \r\n or \r; a blank line ends an
 * event; several `data:` lines in one event are joined with \n; one space after the colon is
 * dropped; comments (`:`) and other fields (`event:`, `id:`, `retry:`) are ignored.
 */
import { upstreamError } from '../../domain/errors/domain-error';

/** One event's text, at most: a chunk of a chat stream is a few hundred bytes; 4 MB is broken. */
export const MAX_EVENT_CHARS = 4 * 1024 * 1024;

export class SseDataParser {
  private pending = '';
  private data: string[] = [];
  private dataChars = 0;
  /** The previous chunk ended with \r: a \n at the start of the next one is the same line end. */
  private skipLeadingLf = false;

  /** Feeds decoded text; returns the data of every event completed by it, in order. */
  push(text: string): string[] {
    const events: string[] = [];
    let start = 0;
    if (this.skipLeadingLf && text.charCodeAt(0) === 10) start = 1;
    this.skipLeadingLf = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.pending + text.slice(start, i);
      this.pending = '';
      this.onLine(line, events);
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    if (start < text.length) this.pending += text.slice(start);
    // A line that never ends (or an event that never does) would grow without bound.
    if (this.pending.length + this.dataChars > MAX_EVENT_CHARS) {
      throw upstreamError(undefined, new Error(`SSE event over ${MAX_EVENT_CHARS} characters`));
    }
    return events;
  }

  /**
   * End of stream. A half-received line is dropped (the connection died inside it); data lines
   * that were complete but never followed by a blank line still form an event, since some
   * servers close the stream right after their last line.
   */
  end(): string[] {
    this.pending = '';
    if (this.data.length === 0) return [];
    const event = this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    return [event];
  }

  private onLine(line: string, events: string[]): void {
    if (line.length === 0) {
      if (this.data.length > 0) {
        events.push(this.data.length === 1 ? this.data[0] : this.data.join('\n'));
        this.data = [];
        this.dataChars = 0;
      }
      return;
    }
    if (!line.startsWith('data')) return;
    if (line.length === 4) {
      this.data.push('');
    } else if (line.charCodeAt(4) === 58 /* : */) {
      const value = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
      this.data.push(value);
      this.dataChars += value.length;
    }
  }
}
