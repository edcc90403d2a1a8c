export { OpenAICompatibleProvider, type OpenAICompatibleOptions } from './openai-compatible-provider';
export type { FetchMedia } from '../shared/fetch-media';
