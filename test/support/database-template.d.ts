export function prepareDatabaseTemplate(): Promise<void>;
export function dropDatabaseTemplate(): Promise<void>;
export function seedDataDir(dataDir: string): void;
export function postgresTemplate(): string | undefined;
