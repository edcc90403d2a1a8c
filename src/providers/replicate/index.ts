export { ReplicateProvider, type ReplicateOptions, type ReplicateVideoPollResult } from './replicate-provider';
