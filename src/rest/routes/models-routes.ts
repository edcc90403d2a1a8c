import { Router } from 'express';
import type { Catalog } from '../../domain/catalog/catalog';
import { modelNotFound } from '../../domain/errors/domain-error';

/** GET /v1/models and GET /v1/models/:id (the records are computed once per catalog load). No route or upstream is shown. */
export function modelsRoutes(catalog: Catalog): Router {
  const r = Router();
  r.get('/models', (_req, res) => {
    res.json({ object: 'list', data: catalog.records });
  });
  r.get('/models/:id', (req, res) => {
    const record = catalog.records.find((m) => m.id === req.params.id);
    if (!record) throw modelNotFound(req.params.id);
    res.json(record);
  });
  return r;
}
