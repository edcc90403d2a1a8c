/**
 * The Tracer on the OpenTelemetry SDK, loaded only when tracing is on (tracing.ts). Spans go in
 * batches to the collector's OTLP/HTTP endpoint (JSON); W3C trace context is read from callers
 * and passed to upstreams and webhook receivers.
 *
 * - A server span per HTTP request, from the outermost request listener, so the JSON lane
 *   (which bypasses Express) and Express are covered alike; a caller's `traceparent` makes it a
 *   child of the caller's span. At the end: the route template, the status, the model the body
 *   named (`gen_ai.request.model`) and what the domain noted (tokens, `svc.credits`).
 * - A client span per upstream attempt (domain/routing/route-attempts.ts), a child of the
 *   request's span; the upstream HTTP calls made inside it carry its `traceparent`.
 *
 * The SDK registers its context manager, propagator and tracer provider process-wide; shutdown
 * takes them back, so one process runs one traced gateway at a time. Everything it is given comes
 * from the configuration (config.ts): no resource detectors, no instrumentations, no log or
 * metric exporters.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, createContextKey, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK, core, resources } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../../config';
import type { AttemptOutcome, AttemptTrace, CallNotes, UpstreamAttempt } from '../../domain/ports/tracing';
import type { OutboundResult, Tracer } from './tracing';

/** The request's server span, kept in its context: notes go to it even from inside an attempt's span. */
const SERVER_SPAN = createContextKey('svc.server-span');

const TRACER_NAME = 'svc-gateway';

export function startOtelTracer(config: TracingConfig): Tracer {
  const sdk = new NodeSDK({
    resource: resources.resourceFromAttributes({ 'service.name': config.serviceName }),
    autoDetectResources: false,
    textMapPropagator: new core.W3CTraceContextPropagator(),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers }),
        scheduledDelayMillis: config.exportDelayMs,
      }),
    ],
    instrumentations: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const tracer = trace.getTracer(TRACER_NAME);
  const serverSpan = (): Span | undefined => context.active().getValue(SERVER_SPAN) as Span | undefined;

  return {
    serve(listener: RequestListener, routeOf: (req: IncomingMessage, status: number) => string): RequestListener {
      return (req, res) => {
        const parent = propagation.extract(ROOT_CONTEXT, req.headers);
        const method = req.method ?? 'GET';
        const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
        const ctx = trace.setSpan(parent, span).setValue(SERVER_SPAN, span);
        // A request's body and its response's events run outside the listener's call: bound, they run in its context.
        context.bind(ctx, req);
        context.bind(ctx, res);
        res.once('close', () => endServerSpan(span, req, res, routeOf));
        context.with(ctx, () => listener(req, res));
      };
    },

    attempt(a: UpstreamAttempt): AttemptTrace {
      const attributes: Record<string, string | number> = { 'svc.route': a.route, 'svc.model': a.model, 'svc.attempt': a.attempt };
      if (a.upstreamModel !== undefined) attributes['gen_ai.request.model'] = a.upstreamModel;
      if (a.provider !== undefined) attributes['gen_ai.provider.name'] = a.provider;
      const span = tracer.startSpan(`upstream ${a.route}`, { kind: SpanKind.CLIENT, attributes }, context.active());
      const ctx = trace.setSpan(context.active(), span);
      return {
        run: (call) => context.with(ctx, call),
        end(outcome: AttemptOutcome, error?: string) {
          span.setAttribute('svc.upstream.outcome', outcome);
          if (outcome === 'failed' || outcome === 'rejected') {
            span.setAttribute('error.type', error ?? outcome);
            span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          }
          span.end();
        },
      };
    },

    noteCall(notes: CallNotes): void {
      const span = serverSpan();
      if (!span) return;
      if (notes.inputTokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', notes.inputTokens);
      if (notes.outputTokens !== undefined) span.setAttribute('gen_ai.usage.output_tokens', notes.outputTokens);
      if (notes.creditsMicro !== undefined) span.setAttribute('svc.credits', notes.creditsMicro / 1_000_000);
    },

    propagate: (headers: Record<string, string>): Record<string, string> => {
      const carrier = { ...headers };
      propagation.inject(context.active(), carrier);
      return carrier;
    },

    async outbound<T>(
      name: string,
      attributes: Record<string, string | number>,
      call: (traceHeaders: Record<string, string>) => Promise<T>,
      result: (answer: T) => OutboundResult,
    ): Promise<T> {
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active());
      const ctx: Context = trace.setSpan(context.active(), span);
      const headers: Record<string, string> = {};
      propagation.inject(ctx, headers);
      try {
        const answer = await context.with(ctx, () => call(headers));
        const { status, error } = result(answer);
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        if (error !== undefined || (status !== undefined && status >= 400)) {
          span.setAttribute('error.type', error ?? String(status));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        }
        return answer;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },

    logFields: (): Record<string, string> => {
      const span = trace.getSpan(context.active());
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },

    async shutdown(): Promise<void> {
      await sdk.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

function endServerSpan(span: Span, req: IncomingMessage, res: ServerResponse, routeOf: (req: IncomingMessage, status: number) => string): void {
  // A client that left before any answer: as the request log says it (nginx's 499).
  const status = res.headersSent ? res.statusCode : 499;
  const route = routeOf(req, status);
  span.updateName(`${req.method ?? 'GET'} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
  const model = (req as { body?: { model?: unknown } }).body?.model;
  if (typeof model === 'string' && model !== '') span.setAttribute('gen_ai.request.model', model.slice(0, 100));
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
