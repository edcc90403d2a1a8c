/**
 * An answer of several images whose storage fails partway (a disk filling up) fails whole and
 * leaves nothing behind: the images stored before the failure are deleted, files and rows, since
 * no URL of them is ever given (else every retry on a full disk would leave more).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServices, type TestServices } from '../support/test-services';
import { MediaLibrary } from '../../src/domain/media/media-library';
import { renderImages } from '../../src/domain/images/image-output';
import { DiskBlobStore } from '../../src/infra/media/disk-blob-store';
import { storageUnavailable } from '../../src/infra/media/storage-unavailable';
import { SqlMediaRecords } from '../../src/infra/db/repositories/sql-media-records';
import { makePng } from '../support/fake-openai-upstream';

let gw: TestServices;
let root: string;
beforeAll(async () => {
  gw = await startTestServices();
  root = mkdtempSync(join(tmpdir(), 'partial-media-'));
});
afterAll(async () => {
  await gw.close();
  rmSync(root, { recursive: true, force: true });
});

/** A disk that takes `room` files, then is full. */
class FillingStore extends DiskBlobStore {
  constructor(private room: number) {
    super(root);
  }
  override async put(key: string, data: Buffer): Promise<void> {
    if (this.room-- <= 0) throw storageUnavailable(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
    await super.put(key, data);
  }
}

const files = () => readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

test('four images, room for two: the answer fails with storage_unavailable, and neither the two stored files nor their rows stay', async () => {
  const db = gw.database.db;
  const media = await MediaLibrary.open(new SqlMediaRecords(db), new FillingStore(2), () => 'http://gw.test');
  const acct = await gw.newAccount(0);
  const images = Array.from({ length: 4 }, () => ({ data: makePng(8, 8), contentType: 'image/png' }));
  const err = await renderImages(images, 'url', acct.id, media).catch((e) => e);
  expect(err).toMatchObject({ code: 'storage_unavailable' });
  expect(files()).toBe(0);
  expect(await db.all(`select id from media_objects where account_id = ?`, [acct.id])).toEqual([]);
  // With room, the same answer is stored whole.
  const stored = await renderImages(images, 'url', acct.id, await MediaLibrary.open(new SqlMediaRecords(db), new FillingStore(4), () => 'http://gw.test'));
  expect(stored).toHaveLength(4);
  expect(files()).toBe(4);
});
