/**
 * The auth phase: what a refused key costs, and whether its time tells if the key id exists.
 * One connection (auth-worker.ts) sends, in turns, secrets whose key ids exist in no row (a new
 * random id each time) and wrong secrets of the bench's live keys (ids that exist); every answer
 * must be a 401. Reports each kind's median and p99 and the statements that read the keys table
 * while it ran, per refused unknown id (the target: 0, and medians within 0.3 ms of each other).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Gateway } from '../src/gateway';
import { randomBase62 } from '../src/domain/shared/ids';

export interface AuthResult {
  refusals: number;
  unknownIdMedianMs: number;
  knownIdMedianMs: number;
  unknownIdP99Ms: number;
  knownIdP99Ms: number;
  medianGapMs: number;
  keyReadsPerUnknownId: number;
  unexpectedStatuses: number;
  ok: boolean;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const ms = (v: number) => Math.round(v * 1000) / 1000;

export async function runAuthPhase(gateway: Gateway, gatewayUrl: string, liveKeys: string[], rounds: number): Promise<AuthResult> {
  const unknown = Array.from({ length: rounds }, () => `svc_live_${randomBase62(16)}_${randomBase62(40)}`);
  // The bench's keys with their secret part replaced: ids that exist, secrets that do not.
  const wrong = liveKeys.map((k) => `${k.slice(0, k.lastIndexOf('_'))}_${randomBase62(40)}`);
  const db = gateway.database.db;
  const reads = { keys: 0 };
  const all = db.all.bind(db);
  const one = db.one.bind(db);
  const counted = (sql: string) => /from api_keys/i.test(sql) && reads.keys++;
  db.all = (sql: string, params?: unknown[]) => (counted(sql), all(sql, params));
  db.one = (sql: string, params?: unknown[]) => (counted(sql), one(sql, params));
  try {
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
    const out = await new Promise<{ latencies: Record<string, number[]>; unexpected: number }>((ok, fail) => {
      const worker = new Worker(join(__dirname, 'auth-worker.js'), { workerData: { url: gatewayUrl, body, kinds: { unknown, wrong }, rounds } });
      worker.once('message', (m: { result?: { latencies: Record<string, number[]>; unexpected: number }; error?: string }) =>
        m.result ? ok(m.result) : fail(new Error(m.error)),
      );
      worker.once('error', fail);
    });
    const u = out.latencies.unknown;
    const k = out.latencies.wrong;
    const result: AuthResult = {
      refusals: u.length + k.length,
      unknownIdMedianMs: ms(quantile(u, 0.5)),
      knownIdMedianMs: ms(quantile(k, 0.5)),
      unknownIdP99Ms: ms(quantile(u, 0.99)),
      knownIdP99Ms: ms(quantile(k, 0.99)),
      medianGapMs: ms(Math.abs(quantile(u, 0.5) - quantile(k, 0.5))),
      keyReadsPerUnknownId: ms(reads.keys / Math.max(1, u.length)),
      unexpectedStatuses: out.unexpected,
      ok: false,
    };
    result.ok = result.medianGapMs <= 0.3 && reads.keys === 0 && out.unexpected === 0;
    return result;
  } finally {
    db.all = all;
    db.one = one;
  }
}

export function renderAuthMarkdown(a: AuthResult): string {
  return [
    '',
    '## Refused keys',
    '',
    `${a.refusals} refusals on one connection, unknown key ids and wrong secrets of existing keys in turns.`,
    '',
    '| refused | median ms | p99 ms |',
    '|---|---:|---:|',
    `| unknown key id | ${a.unknownIdMedianMs} | ${a.unknownIdP99Ms} |`,
    `| existing id, wrong secret | ${a.knownIdMedianMs} | ${a.knownIdP99Ms} |`,
    '',
    `Median gap ${a.medianGapMs} ms (target ≤ 0.3); keys-table reads per refused unknown id: ${a.keyReadsPerUnknownId} (target 0); statuses other than 401: ${a.unexpectedStatuses}. ${a.ok ? 'Met.' : 'NOT MET.'}`,
    '',
  ].join('\n');
}
