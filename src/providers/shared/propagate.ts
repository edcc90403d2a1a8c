/**
 * With tracing on, adds the current span's W3C `traceparent` (and `tracestate`) to an upstream
 * request's headers, answering a new object; without it, the provider sends its headers as built.
 */
export type Propagate = (headers: Record<string, string>) => Record<string, string>;
