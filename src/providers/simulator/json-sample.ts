/**
 * A deterministic value valid against a JSON Schema, the subset OpenAI structured outputs and
 * function parameters use (and what zod-to-JSON-schema writers emit): types and type arrays,
 * properties/required, items/prefixItems, enum/const, anyOf/oneOf/allOf, $ref into $defs or
 * definitions, string formats and length, number bounds and multipleOf, array bounds. Strings
 * carry words of the conversation, so a developer sees their own input come back.
 */

type Schema = Record<string, unknown>;

/** Deeper than this, a recursive schema gets its smallest value. */
const MAX_DEPTH = 8;

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
  constructor(
    private readonly root: Schema,
    /** Text strings are made of, e.g. the user's last message. */
    private readonly words: string,
  ) {}

  sample(schema: unknown = this.root, depth = 0, key = ''): unknown {
    const s = this.resolve(schema);
    if (!s) return {};
    if ('const' in s) return s.const;
    if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
    if ('default' in s && s.default !== undefined) return s.default;
    for (const union of ['anyOf', 'oneOf'] as const) {
      const variants = s[union];
      if (Array.isArray(variants) && variants.length > 0) {
        const preferred = variants.find((v) => this.resolve(v)?.type !== 'null') ?? variants[0];
        return this.sample(preferred, depth, key);
      }
    }
    if (Array.isArray(s.allOf)) return this.sample(mergeAll(s.allOf.map((v) => this.resolve(v) ?? {})), depth, key);
    switch (typeOf(s)) {
      case 'object':
        return this.object(s, depth);
      case 'array':
        return this.array(s, depth, key);
      case 'string':
        return this.string(s, key);
      case 'integer':
        return this.number(s, true);
      case 'number':
        return this.number(s, false);
      case 'boolean':
        return true;
      case 'null':
        return null;
      default:
        return this.words.split(' ')[0] ?? 'value';
    }
  }

  private resolve(schema: unknown): Schema | undefined {
    let s = schema;
    for (let hops = 0; hops < 16 && s && typeof s === 'object' && typeof (s as Schema).$ref === 'string'; hops++) {
      const ref = (s as Schema).$ref as string;
      if (ref === '#') s = this.root;
      else {
        const path = ref.replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        s = path.reduce<unknown>((node, p) => (node && typeof node === 'object' ? (node as Schema)[p] : undefined), this.root);
      }
    }
    return s && typeof s === 'object' ? (s as Schema) : undefined;
  }

  private object(s: Schema, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    for (const [name, sub] of Object.entries(properties)) {
      // Past the depth limit only what is required is written, so recursion ends.
      if (depth >= MAX_DEPTH && !required.has(name)) continue;
      out[name] = this.sample(sub, depth + 1, name);
    }
    return out;
  }

  private array(s: Schema, depth: number, key: string): unknown[] {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    const min = typeof s.minItems === 'number' ? s.minItems : 0;
    const max = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
    const count = Math.min(max, Math.max(min, prefix.length, depth >= MAX_DEPTH ? 0 : 1));
    const out: unknown[] = [];
    for (let i = 0; i < count; i++) out.push(this.sample(i < prefix.length ? prefix[i] : s.items, depth + 1, key));
    return out;
  }

  private string(s: Schema, key: string): string {
    const format = typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined;
    let value = format ?? (this.words || key || 'text');
    const min = typeof s.minLength === 'number' ? s.minLength : 0;
    const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
    if (value.length > max) value = value.slice(0, max);
    while (value.length < min) value += 'x';
    if (typeof s.pattern === 'string') value = matchPattern(s.pattern, value, min, max);
    return value;
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
    return value > high ? high : value;
  }
}

function typeOf(s: Schema): string | undefined {
  if (Array.isArray(s.type)) return (s.type as string[]).find((t) => t !== 'null') ?? 'null';
  if (typeof s.type === 'string') return s.type;
  if (s.properties) return 'object';
  if (s.items || s.prefixItems) return 'array';
  return undefined;
}

function mergeAll(parts: Schema[]): Schema {
  const merged: Schema = { type: 'object', properties: {}, required: [] };
  for (const part of parts) {
    Object.assign(merged.properties as Schema, part.properties ?? {});
    (merged.required as string[]).push(...(Array.isArray(part.required) ? (part.required as string[]) : []));
    if (part.type && part.type !== 'object') return part;
  }
  return merged;
}

/** A string the pattern accepts: the preferred value, else a few plain candidates. */
function matchPattern(pattern: string, preferred: string, min: number, max: number): string {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'u');
  } catch {
    return preferred;
  }
  const candidates = [preferred, 'a', 'A', '0', 'aaaa', 'AAAA', '0000', 'example', 'a1', 'A1'];
  return candidates.find((c) => c.length >= min && c.length <= max && re.test(c)) ?? preferred;
}
