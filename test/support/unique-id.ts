let serial = 0;

/** An id no other test in this process uses: `prefix`, the time, and a counter. */
export const uniqueId = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++serial}`;
