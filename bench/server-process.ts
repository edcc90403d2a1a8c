/**
 * Child-process entry for the outside phase's servers (bench-server.ts; its options as JSON in
 * argv[2]), with the GC tuning `npm start` gives the gateway, as the in-process phases give it to
 * theirs. Listens on 127.0.0.1, sends its port over IPC, closes on 'close'.
 */
import type { AddressInfo } from 'node:net';
import { startBenchServer, type BenchServerOptions } from './bench-server';
import { tuneGcForRequestServing } from '../src/infra/runtime/gc-tuning';

tuneGcForRequestServing();
void startBenchServer(JSON.parse(process.argv[2] ?? '{}') as BenchServerOptions, { exports: 0, spans: 0 }).then(({ server, close }) => {
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', (msg: unknown) => {
    if (msg !== 'close') return;
    server.closeAllConnections();
    server.close(() => void close().finally(() => process.exit(0)));
  });
});
