/**
 * One call's request-log row while the call runs. The door opens it once the API key is
 * authenticated; the services fill in what they learn (the model, the usage, a job); and it is
 * written exactly once, one of two ways:
 *
 * - carried: the call's charge takes it (LeaseBook.commit, the charge batch or the charge
 *   journal) or its video job's insert does, so it commits with them and costs no round trip of
 *   its own; its `creditsMicro` is then what the database charged;
 * - or, once the response has ended and no hold of the call can still carry it, handed to the
 *   log's writer (request-log-writer.ts), which batches it into the database off the call's path.
 *
 * The object is the row itself (its public fields are RequestLogRow, and its JSON is the row
 * the database functions read), so a call allocates nothing else for the log.
 */
import { DomainError } from '../errors/domain-error';
import type { Clock } from '../ports/clock';
import { hasUnstorableText } from '../shared/validate';
import { microToCredits } from '../shared/money';

/** A request-log row as it is stored, and carried as JSON with a charge. */
export interface RequestLogRow {
  /** The call's `x-request-id`. */
  id: string;
  createdMs: number;
  accountId: string;
  keyId: string;
  endpoint: string;
  idempotencyKey: string | null;
  model: string | null;
  status: number;
  /** What the call moved on the balance (a test key's: what it would have cost), micro-credits. */
  creditsMicro: number;
  promptTokens: number;
  completionTokens: number;
  images: number;
  seconds: number;
  latencyMs: number;
  errorType: string | null;
  errorCode: string | null;
  jobId: string | null;
}

/** The error type of a call whose client closed the connection before its answer ended. */
export const CLIENT_CLOSED = 'client_closed';
/** The status of a call whose client left before any answer was sent (as nginx logs it). */
export const CLIENT_CLOSED_STATUS = 499;
/** The longest model name a row keeps, as the request bodies allow. */
const MAX_MODEL_LENGTH = 100;

export class CallLog implements RequestLogRow {
  model: string | null = null;
  status = 200;
  creditsMicro = 0;
  promptTokens = 0;
  completionTokens = 0;
  images = 0;
  seconds = 0;
  latencyMs = 0;
  errorType: string | null = null;
  errorCode: string | null = null;
  jobId: string | null = null;
  // Private (#) fields are no properties: the row's JSON leaves them out.
  readonly #clock: Clock;
  readonly #write: (row: RequestLogRow) => void;
  readonly #startedMs: number;
  /** Holds (or a job's transaction) not settled yet: any of them may still carry the row. */
  #open = 0;
  #carried = false;
  #ended = false;
  #written = false;
  /** How the response ended: its status, whether its client left first, and when. */
  #endedStatus = 0;
  #clientLeft = false;
  #endedMs = 0;

  constructor(
    readonly id: string,
    readonly createdMs: number,
    readonly accountId: string,
    readonly keyId: string,
    readonly endpoint: string,
    readonly idempotencyKey: string | null,
    clock: Clock,
    write: (row: RequestLogRow) => void,
  ) {
    this.#clock = clock;
    this.#write = write;
    this.#startedMs = clock.monotonic();
  }

  /** The model the call resolved to (a default, when the body named none). */
  named(model: string): void {
    if (!this.#carried) this.model = model.slice(0, MAX_MODEL_LENGTH);
  }

  /**
   * The model a request body names, kept when no service named one (a refusal before it was
   * resolved); not text the database cannot store (a NUL, a lone surrogate: refused as such).
   */
  requested(body: unknown): void {
    const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
    if (this.model === null && typeof model === 'string' && model !== '' && !hasUnstorableText(model)) this.named(model);
  }

  /** The tokens the call is charged for. */
  usedTokens(promptTokens: number, completionTokens: number): void {
    if (this.#carried) return;
    this.promptTokens = promptTokens;
    this.completionTokens = completionTokens;
  }

  /** The images delivered. */
  usedImages(images: number): void {
    if (!this.#carried) this.images = images;
  }

  /** The seconds of video a job makes. */
  usedSeconds(seconds: number): void {
    if (!this.#carried) this.seconds = seconds;
  }

  charged(creditsMicro: number): void {
    if (!this.#carried) this.creditsMicro = creditsMicro;
  }

  forJob(jobId: string): void {
    if (!this.#carried) this.jobId = jobId;
  }

  /** How the call failed: a DomainError's type and code, anything else an internal error. The first failure named stays. */
  failed(err: unknown): void {
    const domain = err instanceof DomainError ? err : null;
    this.failedAs(domain?.type ?? 'internal_error', domain?.code ?? null);
  }

  /** A failure known by its wire names (a stored answer replayed). */
  failedAs(type: string, code: string | null): void {
    if (this.#carried || this.errorType !== null) return;
    this.errorType = type;
    this.errorCode = code;
  }

  /** Something that may carry the row is under way (a hold, a job's transaction): the row waits for it to settle. */
  opened(): void {
    this.#open++;
  }

  /** The row, its latency taken now, handed to the charge (or the job) that writes it: nothing changes it from here. */
  carry(): RequestLogRow {
    this.latencyMs = Math.round(this.#clock.monotonic() - this.#startedMs);
    this.#carried = true;
    return this;
  }

  /** What carried the row did not commit (a job refused): the row is the call's refusal again, with nothing used or charged. */
  uncarried(): void {
    this.#carried = false;
    this.creditsMicro = 0;
    this.promptTokens = this.completionTokens = this.images = this.seconds = 0;
    this.jobId = null;
  }

  /** What `opened` announced has settled, carrying the row or not. */
  settled(): void {
    this.#open--;
    this.writeIfDone();
  }

  /**
   * The response has ended (or its client has gone): `status` as sent, `clientLeft` when the
   * answer did not reach its end. A row no charge carries is written once nothing may carry it.
   */
  ended(status: number, clientLeft: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#endedStatus = status;
    this.#clientLeft = clientLeft;
    this.#endedMs = this.#clock.monotonic();
    // A charge still to come (a stream's, after its client left) carries it as it ended.
    if (!this.#carried) this.sayHowItEnded();
    this.writeIfDone();
  }

  private sayHowItEnded(): void {
    this.status = this.#endedStatus;
    this.latencyMs = Math.round(this.#endedMs - this.#startedMs);
    if (this.#clientLeft && this.errorType === null) this.errorType = CLIENT_CLOSED;
  }

  private writeIfDone(): void {
    if (!this.#ended || this.#open > 0 || this.#carried || this.#written || this.model === null) return;
    // Said again: a job refused after the response had ended was carried when it did.
    this.sayHowItEnded();
    this.#written = true;
    this.#write(this);
  }
}

/** A row as both doors show it (each writes `created` in its own form): credits, usage and error grouped. */
export function requestView(r: RequestLogRow) {
  return {
    id: r.id,
    keyId: r.keyId,
    model: r.model,
    endpoint: r.endpoint,
    status: r.status,
    credits: microToCredits(r.creditsMicro),
    usage: { promptTokens: r.promptTokens, completionTokens: r.completionTokens, images: r.images, seconds: r.seconds },
    latencyMs: r.latencyMs,
    idempotencyKey: r.idempotencyKey,
    error: r.errorType === null ? null : { type: r.errorType, code: r.errorCode },
    jobId: r.jobId,
  };
}
