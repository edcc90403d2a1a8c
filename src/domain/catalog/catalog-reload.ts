/**
 * The catalog read again without a restart (`POST /admin/catalog/reload`, SIGHUP): MODELS_FILE
 * re-read and validated; a file that fails is refused with the path of its first bad field and
 * the running catalog stays. Taken, the other instances on the same feed (Redis) are told and
 * read their own MODELS_FILE within the second. Calls in flight keep the model they looked up,
 * and so the routes they started on.
 */
import { createHash } from 'node:crypto';
import { invalidRequest } from '../errors/domain-error';
import { asWritten, FIELD, words } from '../errors/field-path';
import type { TopicFeed } from '../ports/topic-feed';
import { Catalog, CatalogError } from './catalog';
import type { CatalogData } from './model';

export interface CatalogReloadDeps {
  catalog: Catalog;
  modelsFile: string | undefined;
  feed: TopicFeed;
  instanceId: string;
  /** What else must hold for a catalog to be taken (a video route's timeout within the work lease); problems, or none. */
  problems: (data: CatalogData) => string[];
  /** A reload another instance asked for that failed here: the operator should know. */
  onRemoteFailure: (err: unknown) => void;
}

export class CatalogReloader {
  private readonly message: string;

  constructor(private readonly deps: CatalogReloadDeps) {
    // Instances of one deployment read the same MODELS_FILE path; a message about another path is another deployment's.
    const scope = createHash('sha256')
      .update(deps.modelsFile ?? '')
      .digest('base64url')
      .slice(0, 16);
    this.message = `reload ${scope} ${deps.instanceId}`;
    deps.feed.subscribe((message) => {
      const [what, theirs, from] = message.split(' ');
      if (what === 'reload' && theirs === scope && from !== deps.instanceId) {
        try {
          this.apply();
        } catch (err) {
          deps.onRemoteFailure(err);
        }
      }
    });
  }

  /** Reads, checks and takes the catalog here, then tells the other instances. Answers how many models it has. */
  async reload(): Promise<{ models: number }> {
    const data = this.apply();
    await this.deps.feed.publish(this.message).catch(() => undefined);
    return { models: data.models.length };
  }

  private apply(): CatalogData {
    if (!this.deps.modelsFile) throw invalidRequest('No MODELS_FILE is set: the built-in catalog is in use and there is nothing to reload.');
    let data: CatalogData;
    try {
      data = Catalog.read(this.deps.modelsFile);
    } catch (err) {
      if (!(err instanceof CatalogError)) throw err;
      const first = err.problems[0];
      // A place in MODELS_FILE, named as the catalog's problems write it: no door respells it.
      throw invalidRequest(
        words`The catalog was not reloaded: ${FIELD}: ${first.message}${err.problems.length > 1 ? ` (and ${err.problems.length - 1} more)` : ''}.`,
        [asWritten(first.path)],
      );
    }
    const problems = this.deps.problems(data);
    if (problems.length > 0) throw invalidRequest(`The catalog was not reloaded: ${problems[0]}.`);
    this.deps.catalog.replace(data);
    return data;
  }
}
