import { ApiError } from './client';
import { freshToken, type Bearer } from './bearer';

/**
 * GET /account/requests/export with the owner's ID token (the one REST call the console makes:
 * a file is not a GraphQL answer), taken whole as a Blob and handed to the browser as a download
 * named after the format. A refusal is thrown as the gateway's error, its field named.
 */
export async function downloadExport(bearer: Bearer, format: 'csv' | 'jsonl', filters: URLSearchParams): Promise<void> {
  const query = new URLSearchParams(filters);
  query.set('format', format);
  let res: Response;
  try {
    res = await fetch(`/account/requests/export?${query}`, { headers: { authorization: `Bearer ${await freshToken(bearer)}` } });
  } catch {
    throw new ApiError('The gateway could not be reached.', 'network_error');
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string; type?: string; param?: string } } | null;
    throw new ApiError(body?.error?.message ?? `The gateway answered ${res.status}.`, body?.error?.type ?? 'http_error', body?.error?.param ?? null);
  }
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = `requests.${format}`;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // After the click has started the download: the browser holds its own reference by then.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
