/**
 * The request-log phase: what writing the log costs a call. Non-streamed chat at c=32, the
 * gateway only, in interleaved rounds with the log recording and with it turned off
 * (`requestLog.recording`, as REQUEST_LOG_DAYS=0 leaves it), so a drift of the machine falls on
 * both alike. The money is checked as after every phase, and so is the log: every call answered
 * while it recorded has its row, with the credits of a charge, and none answered while it was off.
 */
import type { Gateway } from '../src/gateway';
import { checkMoney, ledgerMark, type MoneyCheck } from './money-check';
import { mergeSegments, type LoadJob, type PhaseResult } from './phase';

export interface RequestLogResult {
  on: PhaseResult;
  off: PhaseResult;
  /** Req/s with the log over req/s without it. */
  ratio: number;
  /** Rows written during the phase, and the calls answered 2xx while the log recorded. */
  rows: number;
  answeredOn: number;
  /** Rows of calls that were not answered 200 with a charge: calls the end of a segment cut off. */
  oddRows: number;
  /** A charged 200 row for every call answered while recording, and no more rows than the cut-off calls (one per connection per segment) explain. */
  rowsOk: boolean;
}

export interface RequestLogPhaseDeps {
  gatewayUrl: string;
  keys: string[];
  seconds: number;
  rounds: number;
  connections: number;
  runPhase: (job: LoadJob) => Promise<PhaseResult>;
  warm: (body: string) => Promise<void>;
}

export async function runRequestLogPhase(gateway: Gateway, deps: RequestLogPhaseDeps): Promise<{ result: RequestLogResult; money: MoneyCheck }> {
  const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'Say hello in five words.' }], max_tokens: 16 });
  const job = (id: string, on: boolean): LoadJob => ({
    id,
    title: `gateway, request log ${on ? 'on' : 'off'}, non-streamed, c=${deps.connections}`,
    target: 'gateway',
    url: deps.gatewayUrl,
    keys: deps.keys,
    collectCharges: true,
    streamed: false,
    body,
    expectInBody: '"chat.completion"',
    path: '/v1/chat/completions',
    connections: deps.connections,
    durationSeconds: Math.max(1, deps.seconds / deps.rounds),
  });
  const requestLog = gateway.services.requestLog;
  const recording = requestLog.recording;
  await deps.warm(body);
  await requestLog.flush();
  const db = gateway.database.db;
  const since = await db.one<{ at: string }>(`select now()::text as at`);
  const mark = await ledgerMark(gateway);
  const parts = { on: [] as PhaseResult[], off: [] as PhaseResult[] };
  try {
    for (let round = 0; round < deps.rounds; round++) {
      // The order alternates (on, off; off, on; …): whatever the first segment of a round meets
      // (the connections' set-up, the other segment's leftovers) falls on both alike.
      for (const on of round % 2 === 0 ? [true, false] : [false, true]) {
        requestLog.recording = on;
        parts[on ? 'on' : 'off'].push(await deps.runPhase(job(`reqlog-${on ? 'on' : 'off'}`, on)));
      }
    }
  } finally {
    requestLog.recording = recording;
  }
  const on = mergeSegments(parts.on);
  const off = mergeSegments(parts.off);
  const both = { ...on, id: 'reqlog-on-and-off', answered: [...(on.answered ?? []), ...(off.answered ?? [])], segments: 2 * deps.rounds };
  const money = await checkMoney(gateway, both, mark);
  await requestLog.flush();
  const counted = await db.one<{ n: string | number; odd: string | number }>(
    `select count(*) as n, count(*) filter (where credits_micro <= 0 or status <> 200 or error_type is not null) as odd
       from request_log where created >= ?::timestamptz`,
    [since!.at],
  );
  const rows = Number(counted?.n ?? 0);
  const answeredOn = on.completed2xx;
  const oddRows = Number(counted?.odd ?? 0);
  for (const r of [on, off]) {
    delete r.answered;
    delete r.rawLatencies;
  }
  const rowsOk = rows - oddRows >= answeredOn && rows <= answeredOn + 2 * deps.connections * deps.rounds;
  const ratio = Math.round((on.requestsPerSecond / Math.max(1, off.requestsPerSecond)) * 1000) / 1000;
  return { result: { on, off, ratio, rows, answeredOn, oddRows, rowsOk }, money };
}

export function renderRequestLogMarkdown(r: RequestLogResult): string {
  const row = (name: string, p: PhaseResult) =>
    `| ${name} | ${p.requestsPerSecond.toFixed(0)} | ${p.latencyMs.p50.toFixed(2)} | ${p.latencyMs.p99.toFixed(2)} | ${JSON.stringify(p.statusCodes)} |`;
  return [
    '',
    '## Request log',
    '',
    'Non-streamed chat at c=32, the gateway only, rounds with the log recording and without it interleaved; money and rows checked after.',
    '',
    '| request log | req/s | p50 ms | p99 ms | statuses |',
    '|---|---:|---:|---:|---|',
    row('on', r.on),
    row('off', r.off),
    '',
    `On / off: ${r.ratio}; rows ${r.rows} (${r.oddRows} of calls cut off) for ${r.answeredOn} calls answered while recording (${r.rowsOk ? 'as expected' : 'WRONG'}).`,
    '',
  ].join('\n');
}
