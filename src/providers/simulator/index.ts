/** The built-in deterministic simulator: serves every model for test keys, and the bench. */
export { SimulatorChatProvider } from './chat';
export { SimulatorImageProvider } from './image';
export { SimulatorImageEditProvider } from './image-edit';
export { SimulatorVideoProvider } from './video';
