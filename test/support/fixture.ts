/**
 * A value a file's tests share: made before them (`beforeAll`), ended after them (`afterAll`),
 * and read through the returned handle, which refuses a read before it exists rather than
 * answering undefined.
 */
export function useFixture<T extends object>(name: string, start: () => Promise<T>, end: (value: T) => Promise<void>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value) await end(value);
  });
  return new Proxy({} as T, {
    get(_target, property) {
      if (!value) throw new Error(`${name}: '${String(property)}' was read before it started (read it inside a test or hook)`);
      return Reflect.get(value, property) as unknown;
    },
  });
}
