/**
 * One abort signal for one upstream call that fires on whichever comes first: the adapter's
 * timeout or the caller's own signal (a client that hung up). We build it by hand instead of
 * `AbortSignal.any([AbortSignal.timeout(), signal])` so the timer is cleared as soon as the
 * call settles (no idle timers piling up under load) and the listener on the caller's signal is
 * removed (older Node 20 lines leak listeners on long-lived signals given to `AbortSignal.any`).
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True when our timeout fired (as opposed to the caller aborting). */
  timedOut(): boolean;
  /** Clears the timer and detaches from the caller's signal. Call in `finally`. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, callerSignal?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`Upstream call exceeded ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal) {
    if (callerSignal.aborted) onCallerAbort();
    else callerSignal.addEventListener('abort', onCallerAbort, { once: true });
  }
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}
