import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import { parse } from 'yaml';
import { packageRoot } from '../package-root';

/** Where the document lives: the repository's docs/, which the image copies beside dist/ (Dockerfile). */
export function openApiPath(root = packageRoot()): string {
  return join(root, 'docs', 'openapi.yaml');
}

/** docs/openapi.yaml, parsed. A tree without it cannot serve GET /openapi.json, so start-up stops naming the path. */
export function loadOpenApiDocument(path = openApiPath()): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`The OpenAPI document is missing: ${path} (${(err as Error).message}); GET /openapi.json serves it.`);
  }
  return parse(text) as Record<string, unknown>;
}

let served: string | undefined;

/** The document as the JSON text GET /openapi.json answers, read once per process. */
export function openApiJson(): string {
  return (served ??= JSON.stringify(loadOpenApiDocument()));
}

/**
 * GET /openapi.json: every REST endpoint, as docs/openapi.yaml describes it. Public, like the
 * console's static files: any cache may keep it a few minutes (it changes with a deployment).
 */
export function openApiRoutes(json: string): Router {
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    res.set({ 'Cache-Control': 'public, max-age=300', 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.send(json);
  });
  return r;
}
