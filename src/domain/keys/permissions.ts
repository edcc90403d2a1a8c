import { modelForbidden } from '../errors/domain-error';
import type { KeyPrincipal } from './principal';

/**
 * SPEC: a model in blockedModels, or outside a non-empty allowedModels, is refused with 403
 * model_forbidden; blocked wins. Every route calls this with the model it will actually use.
 */
export function assertModelAllowed(key: KeyPrincipal, model: string): void {
  if (key.blockedModels?.includes(model)) throw modelForbidden(model);
  if (key.allowedModels && key.allowedModels.length > 0 && !key.allowedModels.includes(model)) throw modelForbidden(model);
}
