import type { CatalogModel, ModelRoute } from '../domain/catalog/model';
import { DomainError } from '../domain/errors/domain-error';
import { attemptRoutes, type RoutingDeps } from '../domain/routing/route-attempts';
import type { ChatProvider, ImageEditProvider, ImageProvider, VideoJobSpec, VideoProvider } from './ports';
import type { FetchMedia } from './shared/fetch-media';
import { SimulatorChatProvider, SimulatorImageEditProvider, SimulatorImageProvider, SimulatorVideoProvider } from './simulator';
import { OpenAICompatibleProvider } from './openai-compatible';
import { FalQueueVideoProvider } from './fal-queue';
import { ReplicateProvider } from './replicate';
import { RoutedChatProvider, RoutedImageProvider, routedFailure, submissionFailure } from './routed-providers';

export interface ProviderRegistryOptions {
  simulatorVideoSeconds: number;
  /** Whose time the simulator's video timeline runs on (the system's by default; a test's fake one). */
  now?: () => number;
  /** Environment, for the upstream API keys a route names by `apiKeyEnv`. */
  secrets: Readonly<Record<string, string | undefined>>;
  /** The SSRF-safe outbound client's media download, for upstream result URLs. */
  fetchMedia: FetchMedia;
  /** Circuit breakers, the attempt report and spans; `classify` is the registry's own. */
  routing: Omit<RoutingDeps, 'classify'>;
  /** With tracing on: adds the current span's `traceparent` to an upstream request's headers. */
  propagate?: (headers: Record<string, string>) => Record<string, string>;
}

type Upstream = OpenAICompatibleProvider | FalQueueVideoProvider | ReplicateProvider;

/**
 * Routes a catalog model to the providers that serve it. Test keys always get the simulator
 * (CONTRACT: every model served by the built-in simulator); live keys get the model's routes,
 * tried by priority and weight with failover (routed-providers.ts). Upstream adapters are built
 * once per (provider, base URL, key, timeout) and reused; the routed view of a model once per
 * model (a reloaded catalog's models get their own).
 */
export class ProviderRegistry {
  private readonly simulator;
  private readonly upstreams = new Map<string, Upstream>();
  private readonly routedChat = new WeakMap<CatalogModel, ChatProvider>();
  private readonly routedImages = new WeakMap<CatalogModel, RoutedImageProvider>();
  private readonly routing: RoutingDeps;

  constructor(private readonly options: ProviderRegistryOptions) {
    this.simulator = {
      chat: new SimulatorChatProvider(),
      image: new SimulatorImageProvider(),
      edit: new SimulatorImageEditProvider(),
      video: new SimulatorVideoProvider({ videoSeconds: options.simulatorVideoSeconds, now: options.now }),
    };
    this.routing = { ...options.routing, classify: routedFailure };
  }

  /** The provider's name stored with a job, so a restarted gateway polls the same provider. */
  providerName(model: CatalogModel, mode: 'live' | 'test'): string {
    return mode === 'test' ? 'simulator' : model.route.provider;
  }

  chat(model: CatalogModel, mode: 'live' | 'test'): ChatProvider {
    if (this.onlySimulator(model, mode)) return this.simulator.chat;
    let routed = this.routedChat.get(model);
    if (!routed) this.routedChat.set(model, (routed = new RoutedChatProvider(model, this.routing, (route) => this.chatFor(route))));
    return routed;
  }

  image(model: CatalogModel, mode: 'live' | 'test'): ImageProvider {
    return this.onlySimulator(model, mode) ? this.simulator.image : this.routedImagesOf(model);
  }

  edit(model: CatalogModel, mode: 'live' | 'test'): ImageEditProvider {
    return this.onlySimulator(model, mode) ? this.simulator.edit : this.routedImagesOf(model);
  }

  /**
   * The provider that has a job, and the model id it knows it by: the route that accepted it
   * (`routeId`), else (not yet submitted) the model's first route. A route the catalog no longer
   * has cannot be asked: the job's model says no more where it went.
   */
  video(model: CatalogModel, providerName: string, routeId?: string | null): { provider: VideoProvider; upstreamModel: string } {
    if (providerName === 'simulator') return { provider: this.simulator.video, upstreamModel: model.route.upstreamModel };
    const route = routeId ? model.routes.find((r) => r.id === routeId) : model.route;
    if (!route) throw new DomainError('internal_error', `The route ${routeId} of this job is no longer in the catalog.`);
    return { provider: this.videoFor(route), upstreamModel: route.upstreamModel };
  }

  /**
   * Hands a job to the model's routes: a route that surely did not take it (no connection, a
   * refusal) passes it to the next; one whose answer was lost keeps it (the error is the answer).
   */
  async submitVideo(model: CatalogModel, providerName: string, spec: VideoJobSpec): Promise<{ queueId: string; routeId: string | null }> {
    if (providerName === 'simulator') return { ...(await this.simulator.video.submit(spec)), routeId: null };
    return attemptRoutes({ ...this.routing, classify: submissionFailure }, model, undefined, async (route) => ({
      ...(await this.videoFor(route).submit({ ...spec, upstreamModel: route.upstreamModel })),
      routeId: route.id,
    }));
  }

  private onlySimulator(model: CatalogModel, mode: 'live' | 'test'): boolean {
    return mode === 'test' || model.routes.every((r) => r.provider === 'simulator');
  }

  private routedImagesOf(model: CatalogModel): RoutedImageProvider {
    let routed = this.routedImages.get(model);
    if (!routed) {
      routed = new RoutedImageProvider(
        model,
        this.routing,
        (route) => this.imageFor(route),
        (route) => this.editFor(route),
      );
      this.routedImages.set(model, routed);
    }
    return routed;
  }

  private chatFor(route: ModelRoute): ChatProvider {
    if (route.provider === 'simulator') return this.simulator.chat;
    return this.openAI(route);
  }

  private imageFor(route: ModelRoute): ImageProvider {
    if (route.provider === 'simulator') return this.simulator.image;
    if (route.provider === 'replicate') return this.replicate(route);
    return this.openAI(route);
  }

  private editFor(route: ModelRoute): ImageEditProvider {
    if (route.provider === 'simulator') return this.simulator.edit;
    return this.openAI(route);
  }

  private videoFor(route: ModelRoute): VideoProvider {
    if (route.provider === 'simulator') return this.simulator.video;
    if (route.provider === 'replicate') return this.replicate(route);
    if (route.provider !== 'fal-queue') throw new DomainError('internal_error', `Route provider ${route.provider} cannot serve video.`);
    return this.upstream(route, () => new FalQueueVideoProvider(this.connection(route)));
  }

  private openAI(route: ModelRoute): OpenAICompatibleProvider {
    if (route.provider !== 'openai-compatible') throw new DomainError('internal_error', `Route provider ${route.provider} cannot serve this capability.`);
    return this.upstream(route, () => new OpenAICompatibleProvider(this.connection(route)));
  }

  private replicate(route: ModelRoute): ReplicateProvider {
    return this.upstream(route, () => new ReplicateProvider(this.connection(route)));
  }

  private connection(route: ModelRoute) {
    if (!route.baseUrl) throw new DomainError('internal_error', `The route ${route.id} has no baseUrl.`);
    return {
      baseUrl: route.baseUrl,
      apiKey: route.apiKeyEnv ? this.options.secrets[route.apiKeyEnv] : undefined,
      timeoutMs: route.timeoutSeconds * 1000,
      fetchMedia: this.options.fetchMedia,
      propagate: this.options.propagate,
    };
  }

  private upstream<T extends Upstream>(route: ModelRoute, make: () => T): T {
    const id = `${route.provider}|${route.baseUrl}|${route.apiKeyEnv ?? ''}|${route.timeoutSeconds}`;
    let p = this.upstreams.get(id);
    if (!p) this.upstreams.set(id, (p = make()));
    return p as T;
  }

  async close(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((p) => p.close()));
  }
}
