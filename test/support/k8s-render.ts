/**
 * Renders a kustomize directory under deploy/k8s with `kubectl kustomize` (no cluster needed) and
 * gives its objects typed enough for the deployment tests to read.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const K8S_DIR = join(__dirname, '..', '..', 'deploy', 'k8s');

/** `kubectl` with its kustomize built in, on the PATH. */
export const hasKubectl = spawnSync('kubectl', ['kustomize', '--help'], { stdio: 'ignore' }).status === 0;

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  /** Read as plain YAML: each test names the fields it checks. */
  spec?: any;
}

export interface Rendered {
  objects: K8sObject[];
  one(kind: string, name: string): K8sObject;
  /** A generated object by its base name: kustomize adds a content hash (`gateway-config-5f8…`). */
  generated(kind: string, name: string): K8sObject | undefined;
  all(kind: string): K8sObject[];
}

export function renderKustomization(dir: string): Rendered {
  const run = spawnSync('kubectl', ['kustomize', join(K8S_DIR, dir)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${run.stderr}`);
  const objects = parseAllDocuments(run.stdout).map((d) => d.toJS() as K8sObject);
  const all = (kind: string) => objects.filter((o) => o.kind === kind);
  return {
    objects,
    all,
    one(kind, name) {
      const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
      if (!found) throw new Error(`${dir}: no ${kind} ${name}`);
      return found;
    },
    generated(kind, name) {
      return all(kind).find((o) => o.metadata.name === name || new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name));
    },
  };
}

/** How long a container's preStop hook waits: an exec of `sleep N`, or the sleep action. */
export function preStopSeconds(container: { lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } } }): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep) return preStop.sleep.seconds;
  const command = preStop?.exec?.command ?? [];
  if (command[0] === 'sleep' && /^\d+$/.test(command[1] ?? '')) return Number(command[1]);
  return 0;
}
