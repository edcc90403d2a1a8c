import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import { parse } from 'yaml';
import { packageRoot } from '../package-root';

/** Where the document lives: the repository's docs/, which the image copies beside dist/ (Dockerfile). */
export function openApiPath(root = packageRoot()): string {
  return join(root, 'docs', 'openapi.yaml');
}

/** docs/openapi.yaml, parsed. */
export function loadOpenApiDocument(path = openApiPath()): Record<string, unknown> {
  requireOpenApiDocument(path);
  return parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** Stops start-up, naming the path, when the document is not there to serve. */
export function requireOpenApiDocument(path = openApiPath()): void {
  try {
    accessSync(path, constants.R_OK);
  } catch (err) {
    throw new Error(`The OpenAPI document is missing: ${path} (${(err as Error).message}); GET /openapi.json serves it.`);
  }
}

let served: string | undefined;

/**
 * GET /openapi.json: every REST endpoint, as docs/openapi.yaml describes it, parsed on the first
 * request and kept (parsing 128 kB of YAML takes about 150 ms: not a cost for every start).
 * Public, like the console's static files: any cache may keep it a few minutes (it changes with
 * a deployment).
 */
export function openApiRoutes(): Router {
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    served ??= JSON.stringify(loadOpenApiDocument());
    res.set({ 'Cache-Control': 'public, max-age=300', 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.send(served);
  });
  return r;
}
