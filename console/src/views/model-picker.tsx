import type { ModelRecord } from './models';

/** A labelled multiple choice of catalog models. */
export function ModelPicker(props: { id: string; label: string; models: ModelRecord[]; value: string[]; onChange: (ids: string[]) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        multiple
        size={5}
        aria-describedby={`${props.id}-hint`}
        onChange={(e) => props.onChange([...e.currentTarget.selectedOptions].map((o) => o.value))}
      >
        {props.models.map((m) => (
          <option value={m.id} selected={props.value.includes(m.id)}>
            {m.id}
          </option>
        ))}
      </select>
      {/* A multiple select takes one option per click: more, or none, needs Ctrl (⌘ on a Mac), which nothing else says. */}
      <p class="hint" id={`${props.id}-hint`}>
        Ctrl-click (⌘-click on a Mac) to choose several or to clear one.
      </p>
    </div>
  );
}

/**
 * Plain decimal only, as the gateway reads a cap (whole micro-credits, at most 1,000,000,000):
 * Number() would also take 0x10 (16), 1e3, 0b1 and Infinity, turn 400 digits into Infinity
 * (which JSON sends as null, "no cap") and round a seventh decimal away before the gateway could
 * refuse it.
 */
const CAP = /^(?:\d{1,10}(?:\.\d{0,6})?|\.\d{1,6})$/;
const MAX_CAP = 1e9;

/** '' → null (no cap); otherwise a number of credits the gateway takes as it is, or an error message. */
export function parseCap(text: string): { cap: number | null } | { error: string } {
  const t = text.trim();
  if (t === '') return { cap: null };
  const cap = CAP.test(t) ? Number(t) : NaN;
  if (!(cap > 0 && cap <= MAX_CAP)) {
    return { error: 'The daily cap is a number of credits more than 0 and at most 1,000,000,000, with up to 6 decimal places (e.g. 25 or 2.5); empty for no cap.' };
  }
  return { cap };
}
