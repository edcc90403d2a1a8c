/** A small catalog with round prices, validated as a MODELS_FILE is, for the services' unit tests. */
import { Catalog } from '../../../src/domain/catalog/catalog';
import { catalogSchema } from '../../../src/domain/catalog/model';

const sim = (upstreamModel: string) => ({ provider: 'simulator' as const, upstreamModel });

/** chat-a: 10 credits per 10k tokens, so one token costs 1,000 micro-credits. */
export const CHAT_MICRO_PER_TOKEN = 1000;
export const CHAT_DEFAULT_MAX_TOKENS = 256;
export const CHAT_MAX_OUTPUT_TOKENS = 4096;
/** Credits per image of image-a, image-plain and edit-a. */
export const IMAGE_A_CREDITS = 2;
export const IMAGE_PLAIN_CREDITS = 1;
export const EDIT_A_CREDITS = 3;

export function testCatalog(): Catalog {
  return new Catalog(
    catalogSchema.parse({
      usdPerCredit: 0.01,
      models: [
        {
          id: 'chat-a',
          group: 'chat',
          ownedBy: 'test',
          creditsPer10kTokens: 10,
          inputs: ['text', 'image'],
          defaultMaxTokens: CHAT_DEFAULT_MAX_TOKENS,
          maxOutputTokens: CHAT_MAX_OUTPUT_TOKENS,
          route: sim('upstream-chat-a'),
        },
        { id: 'chat-b', group: 'chat', ownedBy: 'test', creditsPer10kTokens: 10, route: sim('upstream-chat-b') },
        {
          id: 'image-a',
          group: 'image',
          ownedBy: 'test',
          providerLabel: 'Test',
          creditsPerImage: IMAGE_A_CREDITS,
          options: ['quality', 'background', 'output_format', 'output_compression'],
          route: sim('upstream-image-a'),
        },
        { id: 'image-plain', group: 'image', ownedBy: 'test', providerLabel: 'Test', creditsPerImage: IMAGE_PLAIN_CREDITS, route: sim('upstream-image-plain') },
        {
          id: 'edit-a',
          group: 'image-edit',
          ownedBy: 'test',
          creditsPerImage: EDIT_A_CREDITS,
          options: ['output_format', 'input_fidelity'],
          route: sim('upstream-edit-a'),
        },
      ],
    }),
  );
}
