/**
 * Where a refusal points, and its words around the name of it. The domain names a refused field
 * by its path: keys as the domain (and REST) spell them, numbers for array indexes
 * (`['reference_image_urls', 1]`, `['messages', 0, 'content']`). A door writes the path in its own
 * spelling (REST as it is, GraphQL in camelCase), in `param` and wherever the message names the
 * field, so no door reads or rewrites a message's text.
 */

/** A name that is not a key of the input (a header, a GraphQL argument or variable): every door writes it as it is. */
export interface AsWritten {
  readonly asWritten: string;
}

export const asWritten = (name: string): AsWritten => ({ asWritten: name });

export type PathSegment = string | number | AsWritten;
export type FieldPath = readonly PathSegment[];

/** How a door writes a key of the domain's input. */
export type Spelling = (key: string) => string;

/** The domain's own spelling, which is REST's. */
export const domainSpelling: Spelling = (key) => key;

/** `['reference_image_urls', 2]` → `reference_image_urls[2]`, `['a', 'b', 0, 'c']` → `a.b[0].c`, each key spelled by `spell`. */
export function spellPath(path: FieldPath, spell: Spelling = domainSpelling): string {
  let text = '';
  path.forEach((segment, i) => {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += (i === 0 ? '' : '.') + (typeof segment === 'string' ? spell(segment) : segment.asWritten);
  });
  return text;
}

const SEGMENT = /(?:^|\.)([^.[\]]+)|\[(\d+)\]/y;

/**
 * A path written out by someone else (an upstream's `param`: `messages[0].content`), read back
 * into its segments; text that does not read back as it was written stays one name, as written.
 */
export function pathOf(text: string): FieldPath {
  const path: PathSegment[] = [];
  SEGMENT.lastIndex = 0;
  for (let m = SEGMENT.exec(text); m; m = SEGMENT.exec(text)) path.push(m[1] ?? Number(m[2]));
  return path.length > 0 && spellPath(path) === text ? path : [asWritten(text)];
}

/** Marks where a message names its field, in `words`. */
export const FIELD: unique symbol = Symbol('the refused field');

/** The words of a refusal: its pieces, joined by the name of the field as the door writes it. */
export class Wording {
  constructor(readonly pieces: readonly string[]) {}

  /** Words that name no field. */
  static plain(text: string): Wording {
    return new Wording([text]);
  }

  /** Text from elsewhere (an upstream's message) that names the field as `name`: each mention is the field. */
  static naming(text: string, name: string): Wording {
    return new Wording(name === '' ? [text] : text.split(name));
  }

  /** The message, the field's name written `field`. */
  for(field: string): string {
    return this.pieces.join(field);
  }

  /** The same words with `change` made to the text around the field's name. */
  mapText(change: (text: string) => string): Wording {
    return new Wording(this.pieces.map(change));
  }
}

/** A message naming its field where it says `${FIELD}`: ``words`Invalid '${FIELD}': is required.` ``. Other words are taken as they are. */
export function words(strings: TemplateStringsArray, ...values: Array<string | number | typeof FIELD | Wording>): Wording {
  const pieces = [strings[0]];
  values.forEach((value, i) => {
    if (value === FIELD) pieces.push('');
    else if (value instanceof Wording) {
      pieces[pieces.length - 1] += value.pieces[0];
      pieces.push(...value.pieces.slice(1));
    } else pieces[pieces.length - 1] += String(value);
    pieces[pieces.length - 1] += strings[i + 1];
  });
  return new Wording(pieces);
}
