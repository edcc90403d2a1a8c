/**
 * An OpenTelemetry collector as far as the gateway's exporter sees one: OTLP/HTTP with JSON
 * bodies (`POST /v1/traces`, as @opentelemetry/exporter-trace-otlp-http sends), on a real socket.
 * It answers as a collector does and keeps every span, flattened for the tests to read.
 *
 *   const otlp = await startOtlpReceiver();   // OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url
 *   await otlp.spansOf(traceId);               otlp.close();
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** OTLP's SpanKind numbers. */
export const SPAN_KIND = { server: 2, client: 3 } as const;
/** OTLP's status codes. */
export const STATUS = { unset: 0, ok: 1, error: 2 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: number;
  service: string | undefined;
  startNanos: bigint;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

function attributesOf(list: OtlpAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.doubleValue ?? value.boolValue ?? '';
  }
  return out;
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = attributesOf(rs.resource?.attributes)['service.name'] as string | undefined;
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              status: s.status?.code ?? STATUS.unset,
              service,
              startNanos: BigInt(s.startTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    /** The spans of one trace received so far, oldest first. */
    spansOf: (traceId: string) => spans.filter((s) => s.traceId === traceId).sort((a, b) => (a.startNanos < b.startNanos ? -1 : 1)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

/** A `traceparent` header's parts (W3C Trace Context, version 00). */
export function parseTraceparent(header: string | string[] | undefined): { traceId: string; spanId: string; sampled: boolean } | undefined {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(header ?? ''));
  return m ? { traceId: m[1]!, spanId: m[2]!, sampled: (parseInt(m[3]!, 16) & 1) === 1 } : undefined;
}
