import { defineConfig } from 'vite';

/** The console: Preact through esbuild's automatic JSX runtime, served by the gateway at /console/. */
export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
  server: {
    proxy: {
      '/graphql': { target: 'http://127.0.0.1:8080', ws: true },
      '/dev-idp': 'http://127.0.0.1:8080',
      '/console/config.json': 'http://127.0.0.1:8080',
    },
  },
});
