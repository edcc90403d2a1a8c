export { ReplicateProvider, type ReplicateOptions } from './replicate-provider';
