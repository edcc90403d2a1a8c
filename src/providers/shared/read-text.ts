/** A response body as the adapters read it: undici's Readable, or streamed-call's ChunkStream. */
export type ResponseBody = AsyncIterable<Buffer> & { destroy(): void; readonly destroyed: boolean };

/**
 * Reads an upstream body as UTF-8 up to `limit` bytes. Past the limit it either throws (a
 * success body must be whole) or, for error bodies, keeps what it has and drops the rest.
 */
export async function readText(body: ResponseBody, limit: number, truncate = false): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      if (truncate) break;
      throw new Error(`Upstream response larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
