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
        onChange={(e) => props.onChange([...e.currentTarget.selectedOptions].map((o) => o.value))}
      >
        {props.models.map((m) => (
          <option value={m.id} selected={props.value.includes(m.id)}>
            {m.id}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Plain decimal only: Number() would also take 0x10 (16), 1e3, 0b1 and Infinity, saving a cap the
 * user did not mean to type.
 */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** '' → null (no cap); otherwise a non-negative decimal number of credits, or an error message. */
export function parseCap(text: string): { cap: number | null } | { error: string } {
  const t = text.trim();
  if (t === '') return { cap: null };
  return DECIMAL.test(t) ? { cap: Number(t) } : { error: 'The daily cap is a number of credits, 0 or more (digits and a decimal point, e.g. 25 or 2.5).' };
}
