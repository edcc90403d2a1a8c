/**
 * A deterministic value valid against a JSON Schema, the subset OpenAI structured outputs and
 * function parameters use (and what zod-to-JSON-schema writers emit): types and type arrays,
 * properties/required, items/prefixItems, enum/const, anyOf/oneOf/allOf, $ref into $defs or
 * definitions, string formats and length, number bounds and multipleOf, array bounds. Strings
 * carry words of the conversation, so a developer sees their own input come back.
 *
 * The schema comes from whoever holds a free test key, so a sample is bounded whatever it asks:
 * in characters, in nesting and in schema entries read. Where a schema cannot be met within
 * those bounds (minLength 1e9, a required property that refers to itself) the value is cut
 * short, as a model stopping at its output limit would be, rather than the process running out
 * of memory or stack.
 */
import { PatternMatcher } from './pattern-match';

type Schema = Record<string, unknown>;

/** Deeper than this, only required properties are written and arrays are empty, so a recursive schema ends. */
const MAX_DEPTH = 8;

/**
 * Sampling steps open at once (properties, items, unions, allOf). Past it every value is the
 * smallest of its type without reading below it: a required property that refers to itself, or
 * parameters nested thousands deep, stop here, about 200 stack frames down, far from the ~10,000
 * the stack holds. Zod and hand-written schemas are rarely a tenth as deep.
 */
const MAX_NESTING = 64;

/**
 * Characters of JSON in one sample at most (const, enum and default values, copied from the
 * request, aside). 16 KiB is far more tool arguments or structured output than a test reads,
 * and keeps the time and memory of a free request to milliseconds and kilobytes.
 */
export const MAX_OUTPUT_CHARS = 16_384;

/** Room a property or item needs before it starts: the longest number JSON writes (-1.7976931348623157e+308). */
const MIN_VALUE_CHARS = 24;

/**
 * Schema entries one sample reads (property names, required names, allOf parts, $ref
 * characters, pattern characters): the same wide schema under an array with a huge minItems
 * is otherwise read again for every item.
 */
const MAX_WORK = 100_000;

/** Union variants and type-array entries looked at: JSON has seven types, more is hostile. */
const MAX_VARIANTS_READ = 8;

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'user@example.com',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '12:00:00',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  duration: 'P1D',
};

export class JsonSampler {
  /** Characters the sample may still take. */
  private room = MAX_OUTPUT_CHARS;
  /** Sampling steps open now; unions and allOf count too, so a loop through them also ends. */
  private nesting = 0;
  private work = MAX_WORK;
  private patterns = new PatternMatcher();

  constructor(
    private readonly root: Schema,
    /** Text strings are made of, e.g. the user's last message. */
    private readonly words: string,
  ) {}

  /** A value for the root schema, at most MAX_OUTPUT_CHARS of JSON. */
  sample(): unknown {
    this.room = MAX_OUTPUT_CHARS;
    this.nesting = 0;
    this.work = MAX_WORK;
    this.patterns = new PatternMatcher();
    return this.value(this.root, 0, '');
  }

  private value(schema: unknown, depth: number, key: string): unknown {
    const s = this.resolve(schema);
    if (!s) return this.take({});
    if (this.nesting >= MAX_NESTING || !this.spend(1)) return this.smallest(s, key);
    this.nesting++;
    const value = this.full(s, depth, key);
    this.nesting--;
    return value;
  }

  private full(s: Schema, depth: number, key: string): unknown {
    if ('const' in s) return this.take(s.const);
    if (Array.isArray(s.enum) && s.enum.length > 0) return this.take(s.enum[0]);
    if ('default' in s && s.default !== undefined) return this.take(s.default);
    for (const union of ['anyOf', 'oneOf'] as const) {
      const variants = s[union];
      if (Array.isArray(variants) && variants.length > 0) return this.value(this.variant(variants, depth), depth, key);
    }
    if (Array.isArray(s.allOf)) return this.allOf(s.allOf, depth, key);
    switch (typeOf(s)) {
      case 'object':
        return this.object(s, depth);
      case 'array':
        return this.array(s, depth, key);
      default:
        return this.leaf(s, key);
    }
  }

  /** What is sampled without reading below the schema, so also where nesting or work ran out. */
  private leaf(s: Schema, key: string): unknown {
    switch (typeOf(s)) {
      case 'string':
        return this.string(s, key);
      case 'integer':
        return this.number(s, true);
      case 'number':
        return this.number(s, false);
      case 'boolean':
        return this.take(true);
      case 'null':
        return this.take(null);
      default:
        return this.text(this.words.split(' ')[0] ?? 'value');
    }
  }

  /** The smallest value that still has the type: `{}`, `[]`, a leaf; null for an untyped union (often nullable). */
  private smallest(s: Schema, key: string): unknown {
    if ('const' in s) return this.take(s.const);
    if (Array.isArray(s.enum) && s.enum.length > 0) return this.take(s.enum[0]);
    const type = typeOf(s);
    if (type === 'object') return this.take({});
    if (type === 'array') return this.take([]);
    if (type === undefined && (s.anyOf || s.oneOf || s.allOf)) return this.take(null);
    return this.leaf(s, key);
  }

  /** The first variant that is not null; past MAX_DEPTH the null one, so a nullable recursion ends. */
  private variant(variants: unknown[], depth: number): unknown {
    const head = variants.slice(0, MAX_VARIANTS_READ);
    const types = head.map((v) => this.resolve(v)?.type);
    if (depth >= MAX_DEPTH && types.includes('null')) return head[types.indexOf('null')];
    const i = types.findIndex((t) => t !== 'null');
    return i >= 0 ? head[i] : variants[0];
  }

  private allOf(parts: unknown[], depth: number, key: string): unknown {
    this.work -= parts.length;
    const merged = mergeAll(parts.map((v) => this.resolve(v) ?? {}));
    this.work -= Object.keys(merged.properties ?? {}).length;
    return this.value(merged, depth, key);
  }

  private resolve(schema: unknown): Schema | undefined {
    let s = schema;
    for (let hops = 0; hops < 16 && s && typeof s === 'object' && typeof (s as Schema).$ref === 'string'; hops++) {
      const ref = (s as Schema).$ref as string;
      if (!this.spend(ref.length)) return undefined;
      if (ref === '#') s = this.root;
      else {
        const path = ref
          .replace(/^#\//, '')
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        s = path.reduce<unknown>((node, p) => (node && typeof node === 'object' ? (node as Schema)[p] : undefined), this.root);
      }
    }
    return s && typeof s === 'object' ? (s as Schema) : undefined;
  }

  private object(s: Schema, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = this.take({});
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    const names = Object.keys(properties);
    const requiredNames = Array.isArray(s.required) ? (s.required as string[]) : [];
    this.work -= names.length + requiredNames.length;
    const required = new Set(requiredNames);
    for (const name of names) {
      // Past the depth limit only what is required is written, so recursion ends.
      if (depth >= MAX_DEPTH && !required.has(name)) continue;
      const keyChars = JSON.stringify(name).length + 2; // the colon and a comma
      if (this.room < keyChars + MIN_VALUE_CHARS) break;
      this.room -= keyChars;
      out[name] = this.value(properties[name], depth + 1, name);
    }
    return out;
  }

  private array(s: Schema, depth: number, key: string): unknown[] {
    const out: unknown[] = this.take([]);
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    const min = typeof s.minItems === 'number' ? s.minItems : 0;
    const max = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
    const count = Math.min(max, Math.max(min, prefix.length, depth >= MAX_DEPTH ? 0 : 1));
    // Every item takes a character at least, so the room ends the loop long before a huge minItems does.
    for (let i = 0; i < count && this.room >= 1 + MIN_VALUE_CHARS; i++) {
      this.room -= 1; // the comma
      out.push(this.value(i < prefix.length ? prefix[i] : s.items, depth + 1, key));
    }
    return out;
  }

  private string(s: Schema, key: string): string {
    const format = typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined;
    let value = format ?? (this.words || key || 'text');
    const min = typeof s.minLength === 'number' ? s.minLength : 0;
    const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
    if (value.length > max) value = value.slice(0, max);
    value = value.padEnd(Math.min(Math.ceil(min), this.room), 'x');
    if (typeof s.pattern === 'string' && this.spend(s.pattern.length)) value = this.patterns.match(s.pattern, value, min, max);
    return this.text(value);
  }

  private number(s: Schema, integer: boolean): number {
    const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : 0;
    let low = typeof s.minimum === 'number' ? s.minimum : -Infinity;
    let high = typeof s.maximum === 'number' ? s.maximum : Infinity;
    if (typeof s.exclusiveMinimum === 'number') low = Math.max(low, s.exclusiveMinimum + (step || 1e-9));
    if (typeof s.exclusiveMaximum === 'number') high = Math.min(high, s.exclusiveMaximum - (step || 1e-9));
    let value = Number.isFinite(low) ? low : Math.min(Number.isFinite(high) ? high : 1, 1);
    if (step > 0) value = Math.ceil(value / step) * step;
    if (integer) value = Math.ceil(value);
    return this.take(value > high ? high : value);
  }

  /** A string cut to the room left, escapes counted. */
  private text(value: string): string {
    let cut = value.length > this.room ? value.slice(0, Math.max(0, this.room - 2)) : value;
    for (let over = JSON.stringify(cut).length - this.room; over > 0 && cut; over = JSON.stringify(cut).length - this.room) {
      cut = cut.slice(0, Math.max(0, cut.length - over));
    }
    return this.take(cut);
  }

  /** Counts a value's own characters against the room (an object's or array's braces only). */
  private take<T>(value: T): T {
    this.room -= JSON.stringify(value)?.length ?? 0;
    return value;
  }

  /** Counts schema entries read; false once the sample has read its share, so callers take the short way. */
  private spend(entries: number): boolean {
    if (this.work <= 0) return false;
    this.work -= entries;
    return true;
  }
}

function typeOf(s: Schema): string | undefined {
  if (Array.isArray(s.type)) return (s.type.slice(0, MAX_VARIANTS_READ) as string[]).find((t) => t !== 'null') ?? 'null';
  if (typeof s.type === 'string') return s.type;
  if (s.properties) return 'object';
  if (s.items || s.prefixItems) return 'array';
  return undefined;
}

function mergeAll(parts: Schema[]): Schema {
  const merged: Schema = { type: 'object', properties: {}, required: [] };
  for (const part of parts) {
    Object.assign(merged.properties as Schema, part.properties ?? {});
    // A loop, not push(...): spreading a required list of 100,000 names overflows the stack.
    for (const name of Array.isArray(part.required) ? (part.required as string[]) : []) (merged.required as string[]).push(name);
    if (part.type && part.type !== 'object') return part;
  }
  return merged;
}
