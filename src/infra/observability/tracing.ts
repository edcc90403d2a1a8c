/**
 * OpenTelemetry traces, on only with OTEL_EXPORTER_OTLP_ENDPOINT. This module imports nothing of
 * OpenTelemetry: the SDK (otel-tracer.ts) is loaded by a dynamic import when tracing is on, so
 * an instance without it loads no SDK and every caller holds `undefined` (or the domain's
 * NO_TRACING) instead of a tracer: nothing runs per request.
 */
import type { RequestListener, IncomingMessage } from 'node:http';
import type { TracingConfig } from '../../config';
import type { Tracing } from '../../domain/ports/tracing';

/** What a finished outbound call says about itself on its span. */
export interface OutboundResult {
  status?: number;
  error?: string;
}

export interface Tracer extends Tracing {
  /**
   * Wraps the server's request listener: one server span per request, the JSON lane's and
   * Express's alike, current while the request is served (its events included). `routeOf` names
   * the route template once the answer is sent (never the raw path: it may hold a media token).
   */
  serve(listener: RequestListener, routeOf: (req: IncomingMessage, status: number) => string): RequestListener;
  /** `headers` and the current span's `traceparent` (and `tracestate`): a new object; the one given is not changed. */
  readonly propagate: (headers: Record<string, string>) => Record<string, string>;
  /** A client span of its own around a call made outside any request (a webhook delivery); `call` gets the headers that carry it. */
  outbound<T>(
    name: string,
    attributes: Record<string, string | number>,
    call: (traceHeaders: Record<string, string>) => Promise<T>,
    result: (answer: T) => OutboundResult,
  ): Promise<T>;
  /** The current span's ids, for a log line: `trace_id` and `span_id`, or nothing outside a span. */
  readonly logFields: () => Record<string, string>;
  /** Sends the spans still waiting, then stops. */
  shutdown(): Promise<void>;
}

export async function startTracing(config: TracingConfig | undefined): Promise<Tracer | undefined> {
  if (!config) return undefined;
  const { startOtelTracer } = await import('./otel-tracer.js');
  return startOtelTracer(config);
}
