import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory holding package.json, from src/ (under Vitest) or dist/src/ (compiled) alike: where dist/ and docs/ are. */
export function packageRoot(from = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
