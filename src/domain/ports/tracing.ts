/**
 * What the domain tells a trace, when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT): a span per
 * upstream attempt, and what a call used, on the span of the request being served. The adapter
 * (infra/observability/otel-tracer.ts) finds that request by its async context, so the domain
 * passes no span around. Off, every service holds NO_TRACING, which does nothing.
 */

/** How an attempt ended: ok; failed: the upstream failed; rejected: it refused the request as the client's fault; cancelled: the client left. */
export type AttemptOutcome = 'ok' | 'failed' | 'rejected' | 'cancelled';

export interface AttemptTrace {
  /** Runs the attempt's call inside its span: what the call sends upstream carries the span's `traceparent`. */
  run<T>(call: () => Promise<T>): Promise<T>;
  end(outcome: AttemptOutcome, error?: string): void;
}

export interface UpstreamAttempt {
  /** The catalog model the client asked for. */
  model: string;
  route: string;
  provider?: string;
  /** The upstream's own model id. */
  upstreamModel?: string;
  /** 0 for the first attempt of a call. */
  attempt: number;
}

/** What a call used, as far as it is known; each note adds to the ones before. */
export interface CallNotes {
  inputTokens?: number;
  outputTokens?: number;
  /** What the balance moved (a test key's: what the call would have cost), micro-credits. */
  creditsMicro?: number;
}

export interface Tracing {
  attempt(attempt: UpstreamAttempt): AttemptTrace;
  noteCall(notes: CallNotes): void;
}

const UNTRACED: AttemptTrace = { run: (call) => call(), end: () => undefined };

export const NO_TRACING: Tracing = { attempt: () => UNTRACED, noteCall: () => undefined };
