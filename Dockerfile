# syntax=docker/dockerfile:1
# Multi-stage build: compile once (TypeScript service + web console) with dev dependencies, then
# a runtime image with production dependencies only, running as the unprivileged `node` user.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY src ./src
COPY bench ./bench
COPY console ./console
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
# tini as PID 1: forwards SIGTERM to node (which drains, see docs/operations.md) and reaps zombies.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# GET /openapi.json serves it, read at start-up from docs/ beside package.json (src/rest/package-root.ts).
COPY docs/openapi.yaml ./docs/openapi.yaml
RUN mkdir -p /data && chown node:node /data
# The image's `node` user, by number: Kubernetes' runAsNonRoot can check a numeric user without
# a runAsUser of its own. The process writes only under DATA_DIR (and TMPDIR), so the root
# filesystem may be mounted read-only (deploy/k8s).
USER 1000:1000
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
# A young generation of 32 MiB semi-spaces (16 by default) halves the time the collector takes
# under load (docs/benchmarks.md).
CMD ["node", "--max-semi-space-size=32", "dist/src/main.js"]
