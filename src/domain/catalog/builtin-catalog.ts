import type { CatalogInput } from './model';

const sim = (upstreamModel: string) => ({ provider: 'simulator' as const, upstreamModel });

/** The simulator honours every gpt-image option on its own models (real JPEG/WebP, real alpha). */
const ALL_IMAGE_OPTIONS = ['quality', 'background', 'output_format', 'output_compression', 'moderation', 'style'] as const;

/** Standard third-party style image models: [id, provider label, credits per image, description]. */
const STANDARD_IMAGE_MODELS: [string, string, number, string][] = [
  ['flux-schnell', 'Flux', 1, 'Fast distilled text-to-image model'],
  ['flux-dev', 'Flux', 3, 'Guidance-distilled open-weights model'],
  ['flux-pro', 'Flux', 6, 'High-fidelity prompt following'],
  ['flux-pro-ultra', 'Flux', 9, 'Ultra-high-resolution flagship'],
  ['flux-kontext', 'Flux', 5, 'Context-aware generation'],
  ['sdxl-base', 'Stable', 1, 'General-purpose diffusion model'],
  ['sdxl-turbo', 'Stable', 1, 'Single-step diffusion'],
  ['sd3-medium', 'Stable', 3, 'Multimodal diffusion transformer'],
  ['sd3-large', 'Stable', 5, 'Large multimodal diffusion transformer'],
  ['sd35-large-turbo', 'Stable', 4, 'Turbo variant of the large model'],
  ['ideogram-v2', 'Ideogram', 6, 'Strong typography in images'],
  ['ideogram-v2-turbo', 'Ideogram', 4, 'Faster typography model'],
  ['recraft-v3', 'Recraft', 5, 'Vector and brand-style imagery'],
  ['recraft-20b', 'Recraft', 3, 'Compact design model'],
  ['playground-v25', 'Playground', 2, 'Aesthetic-tuned diffusion'],
  ['kolors', 'Kwai', 2, 'Bilingual photorealistic model'],
  ['hidream-i1-fast', 'HiDream', 2, 'Fast sparse diffusion'],
  ['hidream-i1-full', 'HiDream', 5, 'Full-quality sparse diffusion'],
  ['imagen-4-fast', 'Imagen', 4, 'Fast photorealistic model'],
  ['imagen-4-ultra', 'Imagen', 8, 'Highest-fidelity photorealistic model'],
  ['seedream-v3', 'Seed', 3, 'Bilingual high-resolution model'],
];

/** SPEC's pricing: "1 credit (specialty models)", all five of them alike. */
const CREATIVE_IMAGE_MODELS: [string, number, string][] = [
  ['svc-creative-v8', 1, 'Newest creative-mode model'],
  ['svc-creative-v7', 1, 'Previous creative-mode model'],
  ['svc-creative-anime-v2', 1, 'Creative-mode illustration and anime'],
  ['svc-creative-photoreal-v3', 1, 'Creative-mode photorealism'],
  ['svc-creative-xl', 1, 'Creative-mode high resolution'],
];

/** The catalog used when MODELS_FILE is unset: every model served by the built-in simulator. */
export const BUILTIN_CATALOG: CatalogInput = {
  usdPerCredit: 0.01,
  models: [
    {
      id: 'svc-chat-1',
      group: 'chat',
      ownedBy: 'svc',
      description: 'Base creative chat model',
      creditsPer10kTokens: 1,
      // The simulator reads image parts (it says how many it was shown); audio and files it cannot.
      inputs: ['text', 'image'],
      tools: true,
      structuredOutputs: true,
      route: sim('sim-chat'),
    },
    ...CREATIVE_IMAGE_MODELS.map(([id, credits, description]) => ({
      id,
      group: 'image' as const,
      ownedBy: 'svc',
      providerLabel: 'Svc Creative',
      creative: true,
      creditsPerImage: credits,
      options: [...ALL_IMAGE_OPTIONS],
      description,
      route: sim(id),
    })),
    ...STANDARD_IMAGE_MODELS.map(([id, label, credits, description]) => ({
      id,
      group: 'image' as const,
      ownedBy: label.toLowerCase(),
      providerLabel: label,
      creative: false,
      creditsPerImage: credits,
      description,
      route: sim(id),
    })),
    {
      id: 'svc-image-edit-1',
      group: 'image-edit',
      options: [...ALL_IMAGE_OPTIONS, 'input_fidelity'],
      ownedBy: 'svc',
      description: 'Edits an image by natural-language instruction',
      creditsPerImage: 2,
      route: sim('sim-edit'),
    },
    {
      id: 'svc-2.5-preview-text-to-video',
      group: 'video',
      ownedBy: 'svc',
      input: 'text',
      credits: { '5s': { '480p': 10, '720p': 15, '1080p': 25 }, '10s': { '480p': 20, '720p': 30, '1080p': 50 } },
      route: sim('sim-t2v-2.5'),
    },
    {
      id: 'svc-2.5-preview-image-to-video',
      group: 'video',
      ownedBy: 'svc',
      input: 'image',
      credits: { '5s': { '480p': 10, '720p': 15, '1080p': 25 }, '10s': { '480p': 20, '720p': 30, '1080p': 50 } },
      route: sim('sim-i2v-2.5'),
    },
    {
      id: 'svc-2-7-image-to-video',
      group: 'video',
      ownedBy: 'svc',
      input: 'image',
      credits: { '5s': { '480p': 12, '720p': 18, '1080p': 28 }, '10s': { '480p': 24, '720p': 36, '1080p': 55 } },
      route: sim('sim-i2v-2.7'),
    },
    {
      id: 'svc-2-7-reference-to-video',
      group: 'video',
      ownedBy: 'svc',
      input: 'reference',
      credits: { '5s': { '480p': 12, '720p': 18, '1080p': 27 }, '10s': { '480p': 24, '720p': 36, '1080p': 54 } },
      route: sim('sim-r2v-2.7'),
    },
    {
      id: 'svc-v3-motion-control',
      group: 'motion-control',
      ownedBy: 'svc',
      description: 'Retargets the motion of a reference video onto a character still',
      creditsPerSecond: 5,
      route: sim('sim-motion-v3'),
    },
  ],
};
