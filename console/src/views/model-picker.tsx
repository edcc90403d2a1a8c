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

/** '' → null (no cap); otherwise a non-negative number of credits, or an error message. */
export function parseCap(text: string): { cap: number | null } | { error: string } {
  if (text.trim() === '') return { cap: null };
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? { cap: n } : { error: 'The daily cap is a number of credits, 0 or more.' };
}
