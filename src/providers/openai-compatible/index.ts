export { OpenAICompatibleProvider, type OpenAICompatibleOptions } from './openai-compatible-provider';
export type { FetchMedia } from './fetch-media';
