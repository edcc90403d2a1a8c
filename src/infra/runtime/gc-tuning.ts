import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for this process (every thread: V8's flags are
 * process-wide). Pretenuring allocates an allocation site's objects straight in the old
 * generation once most of them have survived a young-generation collection, a good bet for the
 * long-lived structures a program builds in bursts. A gateway's allocations are nearly all a
 * request's: under a burst (32 connections, a warm-up of 3,000 keys) those survive a scavenge
 * while their calls are in flight, V8 tenures their sites (the request and response objects,
 * header strings, abort signals, the call's records), and every later request's garbage is
 * then born old, for the slow old-generation collector to find. In the bench, with it off, the
 * gateway promoted 0.6–1.2 MB per scavenge at one connection instead of 1.4–2.1, and its CPU per
 * call at 32 connections fell by 10% (non-streamed) and 15% (streamed) over three interleaved
 * runs. Read at each collection, so setting it at start-up, before the load, is enough.
 */
export function tuneGcForRequestServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
