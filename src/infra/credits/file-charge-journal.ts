/**
 * The charge journal as files under DATA_DIR/charge-journal, one per instance. Each charge is
 * one JSON line, appended and flushed to disk (fdatasync) before `append` returns; this happens
 * only while the database cannot take charges, so its synchronous writes never sit on the hot path.
 *
 * Several instances may share the directory (compose mounts one volume for the media of both),
 * so no file is written by two processes:
 * - an instance appends only to `<instance>.jsonl`;
 * - to record its charges it first renames that file to `<instance>.<n>.claimed-<time>` (its own
 *   appends are synchronous, so none can be under way) and reads the renamed file;
 * - a file of another instance is taken over once `adoptAfterMs` has passed since its last
 *   append (an active file's modification time) or since it was claimed or taken over (the time
 *   in its name: a rename keeps the modification time, so by that the file would look abandoned
 *   at once, and two live instances would pass it back and forth without ever reading it). It
 *   is renamed to `<instance>.<n>.adopted-<time>` and read only `settleMs` later, so an append
 *   that had opened the old name before the rename has landed by then.
 * A file is deleted once every charge in it is recorded. Recording is idempotent (by request id),
 * so two instances recording the same file, or a charge that reached the database before its
 * connection failed, charge nothing twice.
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ChargeJournal } from '../../domain/credits/charge-journal';
import type { Clock } from '../../domain/ports/clock';
import { systemClock } from '../../domain/shared/system-clock';
import { chargeTaken, type ChargeOutcome, type ChargeRow } from '../../domain/credits/lease-store';

/** Charges recorded per database call. */
const BATCH = 256;

export interface FileChargeJournalOptions {
  dir: string;
  instanceId: string;
  /** Another instance's file untouched this long is taken over (its instance is gone). */
  adoptAfterMs: number;
  /** How long a taken-over file rests before it is read. */
  settleMs?: number;
  /** Lines that are not a charge (a write torn by a crash), reported once per file. */
  onUnreadable?: (file: string, lines: number) => void;
  /** Whose wall time the files' ages are read against (the system's by default): file times are wall-clock times. */
  clock?: Clock;
}

export class FileChargeJournal implements ChargeJournal {
  private readonly active: string;
  private serial = 0;
  private dirReady = false;
  private readonly clock: Clock;

  constructor(private readonly opts: FileChargeJournalOptions) {
    this.active = join(opts.dir, `${opts.instanceId}.jsonl`);
    this.clock = opts.clock ?? systemClock;
  }

  append(row: ChargeRow): void {
    if (!this.dirReady) {
      mkdirSync(this.opts.dir, { recursive: true });
      this.dirReady = true;
    }
    const created = !exists(this.active);
    const fd = openSync(this.active, 'a');
    try {
      writeSync(fd, `${JSON.stringify(row)}\n`);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // A new file's name is durable only once its directory is flushed too.
    if (created) syncDirectory(this.opts.dir);
  }

  async replay(record: (rows: ChargeRow[]) => Promise<ChargeOutcome[]>): Promise<number> {
    const names = this.list();
    if (names.length === 0) return 0;
    this.claim(names);
    let recorded = 0;
    for (const name of this.list()) {
      if (!this.isReady(name)) continue;
      const path = join(this.opts.dir, name);
      const rows = this.read(path, name);
      if (rows === null) continue;
      for (let i = 0; i < rows.length; i += BATCH) {
        const outcomes = await record(rows.slice(i, i + BATCH));
        recorded += outcomes.filter(chargeTaken).length;
      }
      removeQuietly(path);
    }
    return recorded;
  }

  private list(): string[] {
    try {
      return readdirSync(this.opts.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** This instance's file, and other instances' files left untouched long enough, become this instance's to record. */
  private claim(names: string[]): void {
    const me = this.opts.instanceId;
    const now = this.clock.now();
    for (const name of names) {
      const path = join(this.opts.dir, name);
      if (name === `${me}.jsonl`) {
        renameQuietly(path, join(this.opts.dir, `${me}.${this.serial++}.claimed-${now}`));
        continue;
      }
      if (ownerOf(name) === me) continue;
      const touched = lastTouched(name, path);
      if (touched === null || now - touched < this.opts.adoptAfterMs) continue;
      renameQuietly(path, join(this.opts.dir, `${me}.${this.serial++}.adopted-${now}`));
    }
  }

  private isReady(name: string): boolean {
    if (ownerOf(name) !== this.opts.instanceId) return false;
    if (/\.claimed-\d+$/.test(name)) return true;
    const adopted = /\.adopted-(\d+)$/.exec(name);
    return adopted !== null && this.clock.now() - Number(adopted[1]) >= (this.opts.settleMs ?? 2000);
  }

  private read(path: string, name: string): ChargeRow[] | null {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // another instance took it
      throw err;
    }
    const rows: ChargeRow[] = [];
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const row = parseRow(line);
      if (row) rows.push(row);
      else unreadable++;
    }
    if (unreadable > 0) this.opts.onUnreadable?.(name, unreadable);
    return rows;
  }
}

function parseRow(line: string): ChargeRow | null {
  try {
    const r = JSON.parse(line) as Partial<ChargeRow>;
    const ok =
      typeof r.requestId === 'string' &&
      typeof r.leaseId === 'string' &&
      typeof r.accountId === 'string' &&
      typeof r.keyId === 'string' &&
      (typeof r.model === 'string' || r.model === null) &&
      Number.isSafeInteger(r.leaseMicro) &&
      Number.isSafeInteger(r.excessMicro) &&
      (r.waivedMicro === undefined || Number.isSafeInteger(r.waivedMicro));
    return ok ? (r as ChargeRow) : null;
  } catch {
    return null;
  }
}

const ownerOf = (name: string): string => name.slice(0, name.indexOf('.'));

/** When a journal file was last written to (active) or changed hands (its name says); null for anything else. */
function lastTouched(name: string, path: string): number | null {
  if (name.endsWith('.jsonl')) return mtimeOf(path);
  const handed = /\.(?:claimed|adopted)-(\d+)$/.exec(name);
  return handed ? Number(handed[1]) : null;
}

function exists(path: string): boolean {
  return mtimeOf(path) !== null;
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** Another instance may have renamed or removed it first: that is its to record then. */
function renameQuietly(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
