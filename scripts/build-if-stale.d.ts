/** Builds the service and the console when either is missing or older than its sources. */
export function buildIfStale(log?: (line: string) => void): void;
