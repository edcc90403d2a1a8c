/**
 * deploy/k8s as `kubectl kustomize` renders each overlay: what a cluster operator relies on
 * (probes on /livez and /readyz, a stop grace longer than the preStop wait, the notice and the
 * drain, the migration Job and MIGRATE_ON_START=false, non-root on a read-only root with every
 * path the process writes on a volume, no secret in a ConfigMap, a catalog the gateway loads) and
 * that the configuration each overlay gives the gateway passes its own start-up checks.
 * Needs kubectl (its built-in kustomize) on the PATH; skipped without it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { Catalog } from '../../src/domain/catalog/catalog';
import { hasKubectl, K8S_DIR, preStopSeconds, renderKustomization, type K8sObject, type Rendered } from '../support/k8s-render';

const withKubectl = hasKubectl ? describe : describe.skip;

/** Names that hold a secret wherever they appear; a ConfigMap must carry none of them. */
const SECRET_NAME = /PASSWORD|SECRET|TOKEN|CREDENTIAL|PRIVATE|_KEY(_|$)|^DATABASE_URL$|^REDIS_URL$/;

interface Pod {
  spec: any;
  container: any;
  env: Record<string, string>;
  secretNames: string[];
}

/** A pod template's first container with the environment its ConfigMaps give it. */
function podOf(r: Rendered, owner: K8sObject): Pod {
  const spec = owner.spec.template.spec;
  const container = spec.containers[0];
  const env: Record<string, string> = {};
  const secretNames: string[] = [];
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, r.one('ConfigMap', from.configMapRef.name).data);
    if (from.secretRef) secretNames.push(from.secretRef.name);
  }
  for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return { spec, container, env, secretNames };
}

function mountOf(pod: Pod, path: string): { name: string; mountPath: string; readOnly?: boolean; subPath?: string } | undefined {
  return pod.container.volumeMounts?.find((m: { mountPath: string }) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
}

withKubectl.each(['dev', 'prod'])('deploy/k8s/overlays/%s', (overlay) => {
  let r: Rendered;
  let gateway: K8sObject;
  let pod: Pod;

  beforeAll(() => {
    r = renderKustomization(`overlays/${overlay}`);
    gateway = r.one('Deployment', 'svc-gateway');
    pod = podOf(r, gateway);
  });

  test('the instances are probed on /livez (start-up, liveness) and /readyz (readiness), on the port the gateway listens on', () => {
    const { container, env } = pod;
    expect(container.startupProbe.httpGet.path).toBe('/livez');
    expect(container.livenessProbe.httpGet.path).toBe('/livez');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    const port = container.ports.find((p: { name: string }) => p.name === container.readinessProbe.httpGet.port);
    expect(port.containerPort).toBe(Number(env.PORT));
    expect(env.HOST).toBe('0.0.0.0');
    const service = r.one('Service', 'svc-gateway');
    expect(service.spec.ports[0].targetPort).toBe(port.name);
  });

  test('a stopping pod waits in preStop, then has its notice and drain, and the grace outlasts them all', () => {
    const wait = preStopSeconds(pod.container);
    const notice = Number(pod.env.SHUTDOWN_NOTICE_SECONDS);
    const drain = Number(pod.env.SHUTDOWN_DRAIN_SECONDS);
    expect(wait).toBeGreaterThan(0);
    expect(notice).toBeGreaterThan(0);
    expect(drain).toBeGreaterThan(0);
    // The process exits by itself at the latest notice + drain + 15 s after SIGTERM (src/main.ts).
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(wait + notice + drain + 15);
    expect(gateway.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  test('a Job migrates once (`node dist/src/main.js migrate`) with the instances’ image and settings, and the instances do not migrate', () => {
    const job = r.one('Job', 'svc-gateway-migrate');
    const migrate = podOf(r, job);
    expect([...(migrate.container.command ?? []), ...migrate.container.args]).toEqual(['node', 'dist/src/main.js', 'migrate']);
    expect(migrate.container.image).toBe(pod.container.image);
    expect(migrate.env).toEqual(pod.env);
    expect(migrate.secretNames).toEqual(pod.secretNames);
    expect(migrate.spec.restartPolicy).toBe('Never');
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    expect(pod.env.MIGRATE_ON_START).toBe('false');
    // The Job's pod is no instance: neither the Service, the budget nor the Deployment selects it.
    const jobLabels = job.spec.template.metadata.labels;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    for (const selector of [
      r.one('Service', 'svc-gateway').spec.selector,
      r.one('PodDisruptionBudget', 'svc-gateway').spec.selector.matchLabels,
      gateway.spec.selector.matchLabels,
    ]) {
      expect(selects(selector, gateway.spec.template.metadata.labels)).toBe(true);
      expect(selects(selector, jobLabels)).toBe(false);
    }
  });

  test('the autoscaler and the disruption budget act on the Deployment', () => {
    const hpa = r.one('HorizontalPodAutoscaler', 'svc-gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'svc-gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(r.one('PodDisruptionBudget', 'svc-gateway').spec.maxUnavailable).toBe(1);
  });

  test('gateway pods run as the image’s non-root user on a read-only root, every path the process writes on a volume', () => {
    for (const owner of [gateway, r.one('Job', 'svc-gateway-migrate')]) {
      const p = podOf(r, owner);
      expect(p.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      expect(p.spec.automountServiceAccountToken).toBe(false);
      expect(p.container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(mountOf(p, '/tmp')).toBeDefined();
    }
    // DATA_DIR (charge journal, disk media, PGlite) is a mounted volume, not the image's root.
    const data = mountOf(pod, pod.env.DATA_DIR);
    expect(data).toBeDefined();
    expect(data!.readOnly).toBeUndefined();
    expect(pod.spec.securityContext.fsGroup).toBe(1000);
    // The image's USER is the same number.
    const dockerfile = readFileSync(join(K8S_DIR, '..', '..', 'Dockerfile'), 'utf8');
    expect(/^USER (\d+)/m.exec(dockerfile)?.[1]).toBe(String(pod.spec.securityContext.runAsUser));
  });

  test('no ConfigMap holds a secret; the instances take their secrets from the Secret gateway-secrets', () => {
    const secretValues = r.all('Secret').flatMap((s) => Object.values(s.data ?? {}).map((v) => Buffer.from(v, 'base64').toString()));
    for (const map of r.all('ConfigMap')) {
      for (const [key, value] of Object.entries(map.data ?? {})) {
        expect(`${map.metadata.name}: ${key}`).not.toMatch(SECRET_NAME);
        expect(value).not.toMatch(/:\/\/[^/@\s]+:[^/@\s]+@/); // no URL with a password in it
        for (const secret of secretValues) if (secret.length >= 8) expect(value).not.toContain(secret);
      }
    }
    expect(pod.secretNames).toHaveLength(1);
    expect(pod.secretNames[0]).toMatch(/^gateway-secrets(-[a-z0-9]{10})?$/);
  });

  test('MODELS_FILE is the catalog ConfigMap’s file, mounted as a directory, and the gateway loads it', () => {
    const mount = mountOf(pod, pod.env.MODELS_FILE);
    expect(mount).toBeDefined();
    expect(mount).not.toHaveProperty('subPath'); // an edited ConfigMap reaches the file
    const volume = pod.spec.volumes.find((v: { name: string }) => v.name === mount!.name);
    const catalogMap = r.one('ConfigMap', volume.configMap.name);
    const file = pod.env.MODELS_FILE.slice(mount!.mountPath.length + 1);
    const dir = mkdtempSync(join(tmpdir(), 'k8s-catalog-'));
    try {
      writeFileSync(join(dir, file), catalogMap.data![file]!);
      expect(Catalog.load(join(dir, file)).records.length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the environment an instance gets passes the gateway’s configuration checks', () => {
    // Secret values as the overlay generates them, or (prod) as an operator would set them.
    const secrets: Record<string, string> = {
      DATABASE_URL: 'postgres://gateway:x@db.internal:5432/gateway',
      REDIS_URL: 'rediss://cache.internal:6379',
      ADMIN_TOKEN: 'an-operator-token-of-32-characters',
    };
    const generated = r.generated('Secret', 'gateway-secrets');
    for (const [k, v] of Object.entries(generated?.data ?? {})) secrets[k] = Buffer.from(v, 'base64').toString();
    const config = loadConfig({ ...pod.env, ...secrets });
    expect(config).toMatchObject({ host: '0.0.0.0', migrateOnStart: false, dataDir: pod.env.DATA_DIR, modelsFile: pod.env.MODELS_FILE });
    expect(config.databaseUrl).toMatch(/^postgres:/);
    expect(config.redisUrl).toMatch(/^rediss?:/);
  });
});

withKubectl('deploy/k8s overlays', () => {
  test('dev: PostgreSQL, Redis and MinIO run in the cluster, named by the gateway’s Secret and settings', () => {
    const r = renderKustomization('overlays/dev');
    const pod = podOf(r, r.one('Deployment', 'svc-gateway'));
    const secret = r.generated('Secret', 'gateway-secrets')!;
    const value = (k: string) => Buffer.from(secret.data![k]!, 'base64').toString();
    expect(pod.secretNames).toEqual([secret.metadata.name]);
    for (const url of [value('DATABASE_URL'), value('REDIS_URL'), pod.env.S3_ENDPOINT!]) {
      const host = new URL(url).hostname;
      const service = r.one('Service', host);
      expect(service.spec.ports[0].port).toBe(Number(new URL(url).port));
    }
    expect(pod.env.MEDIA_STORE).toBe('s3');
    expect(r.one('StatefulSet', 'postgres').spec.template.spec.containers[0].image).toMatch(/^postgres:16/);
    expect(r.one('Job', 'minio-bucket').spec.template.spec.containers[0].args.join(' ')).toContain(`mb --ignore-existing dev/${pod.env.S3_BUCKET}`);
  });

  test('prod: no Secret is rendered (it comes from outside) and DATA_DIR is a volume every instance shares', () => {
    const r = renderKustomization('overlays/prod');
    expect(r.all('Secret')).toEqual([]);
    const pod = podOf(r, r.one('Deployment', 'svc-gateway'));
    expect(pod.secretNames).toEqual(['gateway-secrets']);
    expect(pod.env.NODE_ENV).toBe('production');
    const data = pod.spec.volumes.find((v: { name: string }) => v.name === mountOf(pod, pod.env.DATA_DIR)!.name);
    const claim = r.one('PersistentVolumeClaim', data.persistentVolumeClaim.claimName);
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    expect(pod.env.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^https?:\/\//);
  });

  test('the base catalog is the built-in one, so the dev cluster serves what `npm start` serves', () => {
    const base = JSON.parse(readFileSync(join(K8S_DIR, 'base', 'catalog', 'models.json'), 'utf8'));
    expect(base).toEqual(JSON.parse(JSON.stringify(BUILTIN_CATALOG)));
  });
});
