/** Where a stored medium's bytes are, and what they are. */
export interface StoredMedia {
  contentType: string;
  storageKey: string;
}

export interface NewMedia extends StoredMedia {
  id: string;
  accountId: string;
  sizeBytes: number;
}

/** The records of stored media, and the server secret their URLs are signed with. Its SQL: infra/db/repositories/sql-media-records.ts. */
export interface MediaRecords {
  /** The server secret `name`: `candidate` is kept when there is none yet, so every instance, and every restart, gets the first one kept. */
  serverSecret(name: string, candidate: string): Promise<string>;
  insert(media: NewMedia): Promise<void>;
  remove(ids: readonly string[]): Promise<void>;
  find(id: string): Promise<StoredMedia | undefined>;
}
