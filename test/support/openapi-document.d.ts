/** Types of openapi-document.js (plain CommonJS, run by Jest's globalSetup too). */
export function prepareOpenApiDocument(): void;
export function dropOpenApiDocument(): void;
export function parsedOpenApiDocument(): Record<string, unknown> | undefined;
