import type { CatalogModel, ModelRoute } from '../domain/catalog/model';
import { DomainError } from '../domain/errors/domain-error';
import type { ChatProvider, GeneratedImage, ImageEditProvider, ImageProvider, VideoProvider } from './ports';
import { SimulatorChatProvider, SimulatorImageEditProvider, SimulatorImageProvider, SimulatorVideoProvider } from './simulator';
import { OpenAICompatibleProvider } from './openai-compatible';
import { FalQueueVideoProvider } from './fal-queue';

export interface ProviderRegistryOptions {
  simulatorVideoSeconds: number;
  /** Environment, for the upstream API keys a route names by `apiKeyEnv`. */
  secrets: Readonly<Record<string, string | undefined>>;
  /** The SSRF-safe outbound client's media download, for upstream result URLs. */
  fetchMedia: (url: string) => Promise<GeneratedImage>;
}

/**
 * Routes a catalog model to the provider that serves it. Test keys always get the simulator
 * (CONTRACT: every model served by the built-in simulator); live keys get the model's route.
 * Upstream adapters are built once per (provider, base URL, key) and reused.
 */
export class ProviderRegistry {
  private readonly simulator;
  private readonly upstreams = new Map<string, OpenAICompatibleProvider | FalQueueVideoProvider>();

  constructor(private readonly options: ProviderRegistryOptions) {
    this.simulator = {
      chat: new SimulatorChatProvider(),
      image: new SimulatorImageProvider(),
      edit: new SimulatorImageEditProvider(),
      video: new SimulatorVideoProvider({ videoSeconds: options.simulatorVideoSeconds }),
    };
  }

  /** The provider's name stored with a job, so a restarted gateway polls the same provider. */
  providerName(model: CatalogModel, mode: 'live' | 'test'): string {
    return mode === 'test' ? 'simulator' : model.route.provider;
  }

  chat(model: CatalogModel, mode: 'live' | 'test'): ChatProvider {
    return this.useSimulator(model, mode) ? this.simulator.chat : this.openAI(model.route);
  }

  image(model: CatalogModel, mode: 'live' | 'test'): ImageProvider {
    return this.useSimulator(model, mode) ? this.simulator.image : this.openAI(model.route);
  }

  edit(model: CatalogModel, mode: 'live' | 'test'): ImageEditProvider {
    return this.useSimulator(model, mode) ? this.simulator.edit : this.openAI(model.route);
  }

  /** A video provider by the name stored on the job (see providerName). */
  video(model: CatalogModel, providerName: string): VideoProvider {
    if (providerName === 'simulator') return this.simulator.video;
    if (model.route.provider !== 'fal-queue') throw new DomainError('internal_error', `No video provider '${providerName}'.`);
    return this.upstream(model.route, () => new FalQueueVideoProvider({
      baseUrl: this.baseUrlOf(model.route),
      apiKey: this.apiKeyOf(model.route),
      timeoutMs: model.route.timeoutSeconds * 1000,
      fetchMedia: this.options.fetchMedia,
    })) as FalQueueVideoProvider;
  }

  private useSimulator(model: CatalogModel, mode: 'live' | 'test'): boolean {
    return mode === 'test' || model.route.provider === 'simulator';
  }

  private openAI(route: ModelRoute): OpenAICompatibleProvider {
    if (route.provider !== 'openai-compatible') throw new DomainError('internal_error', `Route provider ${route.provider} cannot serve this capability.`);
    return this.upstream(route, () => new OpenAICompatibleProvider({
      baseUrl: this.baseUrlOf(route),
      apiKey: this.apiKeyOf(route),
      timeoutMs: route.timeoutSeconds * 1000,
      fetchMedia: this.options.fetchMedia,
    })) as OpenAICompatibleProvider;
  }

  private upstream<T extends OpenAICompatibleProvider | FalQueueVideoProvider>(route: ModelRoute, make: () => T): T {
    const id = `${route.provider}|${route.baseUrl}|${route.apiKeyEnv ?? ''}|${route.timeoutSeconds}`;
    let p = this.upstreams.get(id);
    if (!p) this.upstreams.set(id, (p = make()));
    return p as T;
  }

  private baseUrlOf(route: ModelRoute): string {
    if (!route.baseUrl) throw new DomainError('internal_error', `The route for ${route.upstreamModel} has no baseUrl.`);
    return route.baseUrl;
  }

  private apiKeyOf(route: ModelRoute): string | undefined {
    return route.apiKeyEnv ? this.options.secrets[route.apiKeyEnv] : undefined;
  }

  async close(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((p) => ('close' in p && typeof p.close === 'function' ? p.close() : undefined)));
  }
}
