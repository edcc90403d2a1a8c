/** `Authorization: Bearer <token>` → the token; both doors (REST, GraphQL over HTTP and WebSocket) read credentials through this. */
export function bearerToken(header: string | undefined): string | null {
  if (!header || header.length > 10_000) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
