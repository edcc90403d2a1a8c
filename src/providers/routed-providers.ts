/**
 * Chat, image and edit providers over a model's upstream routes (domain/routing/route-attempts.ts):
 * each call goes to a route by priority and weight, and a retryable failure is tried again on
 * another. A stream is retried until its first event; once that is out to the client, nothing is.
 * Each attempt names its route's own upstream model.
 */
import type { CatalogModel, ModelRoute } from '../domain/catalog/model';
import { attemptRoutes, type RoutedAttemptFailure, type RoutingDeps } from '../domain/routing/route-attempts';
import type {
  ChatProvider,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  GeneratedImages,
  ImageEditProvider,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageProvider,
  ImageStreamEvent,
} from './ports';
import type { CallSignal } from '../domain/shared/call-signal';
import { editEvents, generationEvents } from '../domain/images/image-stream';
import { classifyAttemptFailure } from './shared/attempt-failure';

/** The retry rules' reading of a failed call: retried when the contract says so, counted against the route when the upstream failed. */
export function routedFailure(err: unknown): RoutedAttemptFailure {
  const f = classifyAttemptFailure(err);
  return { retryable: f.retryable, upstreamFault: f.retryable, retryAfterSeconds: f.retryAfterSeconds, summary: f.summary };
}

/** A video submission fails over only when the upstream surely did not take the job; a lost answer stays with its route. */
export function submissionFailure(err: unknown): RoutedAttemptFailure {
  const f = classifyAttemptFailure(err);
  return { retryable: f.retryable && f.surelyNotAccepted, upstreamFault: f.retryable, retryAfterSeconds: f.retryAfterSeconds, summary: f.summary };
}

type Pick<P> = (route: ModelRoute) => P;

export class RoutedChatProvider implements ChatProvider {
  constructor(
    private readonly model: CatalogModel,
    private readonly routing: RoutingDeps,
    private readonly pick: Pick<ChatProvider>,
  ) {}

  complete(request: ChatRequest): Promise<ChatResult> {
    return attemptRoutes(this.routing, this.model, request.signal, (route) => this.pick(route).complete({ ...request, upstreamModel: route.upstreamModel }));
  }

  stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    return routedStream(this.routing, this.model, request.signal, (route) => this.pick(route).stream({ ...request, upstreamModel: route.upstreamModel }));
  }
}

export class RoutedImageProvider implements ImageProvider, ImageEditProvider {
  constructor(
    private readonly model: CatalogModel,
    private readonly routing: RoutingDeps,
    private readonly generator: Pick<ImageProvider>,
    private readonly editor: Pick<ImageEditProvider>,
  ) {}

  generate(request: ImageGenerationRequest): Promise<GeneratedImages> {
    return attemptRoutes(this.routing, this.model, request.signal, (route) =>
      this.generator(route).generate({ ...request, upstreamModel: route.upstreamModel }),
    );
  }

  edit(request: ImageEditRequest): Promise<GeneratedImages> {
    return attemptRoutes(this.routing, this.model, request.signal, (route) => this.editor(route).edit({ ...request, upstreamModel: route.upstreamModel }));
  }

  /** A route that cannot stream (Replicate) answers its image as the one completed event. */
  generateStream(request: ImageGenerationRequest): AsyncIterable<ImageStreamEvent> {
    return routedStream(this.routing, this.model, request.signal, (route) =>
      generationEvents(this.generator(route), { ...request, upstreamModel: route.upstreamModel }),
    );
  }

  editStream(request: ImageEditRequest): AsyncIterable<ImageStreamEvent> {
    return routedStream(this.routing, this.model, request.signal, (route) =>
      editEvents(this.editor(route), { ...request, upstreamModel: route.upstreamModel }),
    );
  }
}

/**
 * A stream over the model's routes: an attempt is over once its first event came, so a failure
 * before it is tried again elsewhere, and nothing after it is.
 */
async function* routedStream<E>(
  routing: RoutingDeps,
  model: CatalogModel,
  signal: CallSignal | undefined,
  open: (route: ModelRoute) => AsyncIterable<E>,
): AsyncGenerator<E> {
  const opened = await attemptRoutes(routing, model, signal, async (route) => {
    const events = open(route)[Symbol.asyncIterator]();
    try {
      return { events, first: await events.next() };
    } catch (err) {
      await events.return?.().catch(() => undefined);
      throw err;
    }
  });
  try {
    for (let next = opened.first; !next.done; next = await opened.events.next()) yield next.value;
  } finally {
    await opened.events.return?.();
  }
}
