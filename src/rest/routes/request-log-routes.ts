import type { ServerResponse } from 'node:http';
import { Router } from 'express';
import type { RequestLog } from '../../domain/requests/request-log';
import type { RequestLogRow } from '../../domain/requests/call-log';
import type { Logger } from '../../infra/observability/logger';
import { accountIdOf } from '../auth';
import { csvHeader, csvLines, requestRecord } from './request-log-wire';

/**
 * GET /account/requests (a page, newest first) and GET /account/requests/export (every row that
 * matches, streamed as CSV or JSON lines), ID-token authenticated by the caller: the account's
 * own rows only.
 */
export function requestLogRoutes(requestLog: RequestLog, logger: Logger): Router {
  const r = Router();

  r.get('/account/requests', async (req, res) => {
    const page = await requestLog.list(accountIdOf(res), { ...req.query });
    res.json({ object: 'list', data: page.rows.map(requestRecord), hasMore: page.hasNextPage, nextCursor: page.hasNextPage ? page.endCursor : null });
  });

  r.get('/account/requests/export', async (req, res) => {
    const { format, chunks } = requestLog.export(accountIdOf(res), { ...req.query });
    // The first chunk before the headers: a database that does not answer is still an ordinary 503.
    let next = await chunks.next();
    res.writeHead(200, {
      'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': `attachment; filename="requests.${format}"`,
    });
    if (format === 'csv') res.write(csvHeader());
    try {
      for (; !next.done && !res.destroyed; next = await chunks.next()) {
        const text = format === 'csv' ? csvLines(next.value) : jsonLines(next.value);
        // One chunk in memory at a time: the next is read once the socket has taken this one.
        if (!res.write(text)) await drained(res);
      }
    } catch (err) {
      // Past the headers a short file must not look whole: the connection is cut, the client sees the download fail.
      logger.warn({ err: String(err) }, 'request log export cut short');
      res.destroy();
      return;
    } finally {
      if (!next.done) await chunks.return(undefined);
    }
    res.end();
  });

  return r;
}

const jsonLines = (rows: readonly RequestLogRow[]): string => {
  let text = '';
  for (const row of rows) text += `${JSON.stringify(requestRecord(row))}\n`;
  return text;
};

/** Settles once the socket takes more, or the client has gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
