export { FalQueueVideoProvider, type FalQueueOptions } from './fal-queue-provider';
