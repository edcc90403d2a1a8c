/**
 * Which of the account's alerts the owner has seen: the newest delivery time the Settings view
 * showed, kept in this browser's localStorage per account (a marker, not a credential: nothing
 * of it signs anyone in). Overview's notice names the events delivered since.
 */
const storageKey = (accountId: string) => `svc.console.alertsSeen.${accountId}`;

/** When the newest alert the owner saw was delivered (ISO), or null. */
export function alertsSeenUntil(accountId: string): string | null {
  try {
    return localStorage.getItem(storageKey(accountId));
  } catch {
    return null;
  }
}

/** Marks everything delivered up to `created` (ISO) as seen; an older time changes nothing. */
export function markAlertsSeen(accountId: string, created: string | undefined): void {
  if (!created) return;
  const seen = alertsSeenUntil(accountId);
  if (seen && Date.parse(seen) >= Date.parse(created)) return;
  try {
    localStorage.setItem(storageKey(accountId), created);
  } catch {
    // Storage refused (a private window's quota): the notice shows again next time, nothing worse.
  }
}

/** How far back an alert counts as recent when the owner has never opened Settings here. */
const RECENT_MS = 7 * 86_400_000;

/** The events (distinct, newest first) delivered after what was seen: those the notice names. */
export function unseenAlerts<D extends { eventId: string; eventType: string; created: string }>(accountId: string, deliveries: D[], now = Date.now()): D[] {
  const seen = alertsSeenUntil(accountId);
  const after = seen ? Date.parse(seen) : now - RECENT_MS;
  const byEvent = new Map<string, D>();
  for (const d of deliveries) if (Date.parse(d.created) > after && !byEvent.has(d.eventId)) byEvent.set(d.eventId, d);
  return [...byEvent.values()];
}
